// The planner, one suite run for both host toolchains (GNU and MSVC), with an
// in-memory repository and fake toolchain facts: no nvcc, no torch, nothing
// written (the fixtures: plan_test_support.h).  What each toolchain writes
// into a command is host_toolchain_test's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/plan/object_key.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/plan/plan_test_support.h"
#include "sagebuild/toolchain/gnu_toolchain.h"
#include "sagebuild/toolchain/msvc_toolchain.h"

using namespace sb::plan;
using namespace sb::plan::testing;
namespace fs = std::filesystem;
using sb::Arch;
using sb::graph::Edge;

namespace {

Kind each_kind() { return GENERATE(Kind::gnu, Kind::msvc); }

}  // namespace

TEST_CASE("gencode values per family min_arch, with PTX for the PTX arch") {
  std::vector<Arch> archs = {A("8.0"), A("8.9"), A("9.0a")};
  CHECK(gencode_values(archs, A("8.9"), A("8.0")) == std::vector<std::string>{"arch=compute_80,code=sm_80",
                                                                              "arch=compute_89,code=[sm_89,compute_89]",
                                                                              "arch=compute_90a,code=sm_90a"});
  CHECK(gencode_values(archs, A("8.9"), A("8.9")).size() == 2);
  // The PTX arch not among the SASS archs gets compute_XX alone.
  CHECK(gencode_values({A("9.0a")}, A("8.0"), A("8.0")) ==
        std::vector<std::string>{"arch=compute_90a,code=sm_90a", "arch=compute_80,code=compute_80"});
  CHECK(gencode_values({A("8.0")}, A("8.0"), A("8.9")).empty());
}

TEST_CASE("Py_LIMITED_API as the row's oldest Python") {
  CHECK(limited_api_hex({3, 10}) == "0x030A0000");
  CHECK(limited_api_hex({3, 9}) == "0x03090000");
}

TEST_CASE("object keys follow the source, its headers and the flags, nothing else") {
  FakeRepo repo;
  auto read = repo.reader();
  ObjectKeyInput in{
      "/repo/kernels/src/quant.cu",          "/repo", {"/repo/kernels/include"}, "nvcc 13.0.88 / gcc 12.2.0",
      {"-O3", "arch=compute_80,code=sm_80"}, ""};
  auto k0 = object_key(in, read);
  CHECK(k0.size() == 64);
  CHECK(object_key(in, read) == k0);
  CHECK(include_closure(in.source, in.include_dirs, read).size() == 3);  // quant.cu, quant.h, common.h
  SECTION("an unrelated file changes nothing") {
    repo.files["/repo/kernels/src/pv_fp8.cu"] += "// edit\n";
    CHECK(object_key(in, read) == k0);
  }
  SECTION("the source") {
    repo.files["/repo/kernels/src/quant.cu"] += "// edit\n";
    CHECK(object_key(in, read) != k0);
  }
  SECTION("a header included indirectly") {
    repo.files["/repo/kernels/include/sage/common.h"] = "#pragma once\nconstexpr int kTile = 128;\n";
    CHECK(object_key(in, read) != k0);
  }
  SECTION("a flag, the arch set, the compiler") {
    auto in2 = in;
    in2.flags.push_back("--use_fast_math");
    CHECK(object_key(in2, read) != k0);
    in2 = in;
    in2.flags[1] = "arch=compute_90a,code=sm_90a";
    CHECK(object_key(in2, read) != k0);
    in2 = in;
    in2.compiler = "nvcc 13.0.48 / gcc 12.2.0";
    CHECK(object_key(in2, read) != k0);
  }
  SECTION("the checkout location does not matter") {
    FakeRepo moved;
    std::map<fs::path, std::string> files;
    for (auto& [p, c] : repo.files) files["/elsewhere" + p.string().substr(5)] = c;
    moved.files = files;
    ObjectKeyInput in2 = in;
    in2.source = "/elsewhere/kernels/src/quant.cu";
    in2.repo_root = "/elsewhere";
    in2.include_dirs = {"/elsewhere/kernels/include"};
    CHECK(object_key(in2, moved.reader()) == k0);
  }
}

TEST_CASE("includes are scanned from #include lines") {
  CHECK(scan_includes(
            "#include \"a.h\"\n  #  include <b/c.h>\n// #include \"no\" is still a line? no: comment\n#define X\n") ==
        std::vector<std::string>{"a.h", "b/c.h"});
}

TEST_CASE("every toolchain: families are compiled only for the row archs at or above their min_arch") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto g = plan_compile({input(kind, row(kind, "2.11.0", {A("8.0")}), manifest(), toolchain(kind, "2.11.0"))},
                        repo.settings());
  REQUIRE(g.rows.size() == 1);
  CHECK(g.rows[0].families == std::vector<std::string>{"pv_fp16", "quant"});
  CHECK(g.rows[0].skipped_families == std::vector<SkippedFamily>{{"pv_fp8", "no arch >= min_arch 8.9"}});
  CHECK(g.kernels_to_compile == 2);
  auto g2 = plan_compile({input(kind, "2.11.0")}, repo.settings());
  CHECK(g2.rows[0].families.size() == 3);
  const auto* fp8 = kernel_of(g2.rows[0], "pv_fp8");
  REQUIRE(fp8);
  const Edge* e = edge_for(g2, fp8->object);
  REQUIRE(e);
  auto cmd = joined(e->argv);
  CHECK(cmd.find("compute_80") == std::string::npos);
  CHECK(cmd.find("arch=compute_89,code=[sm_89,compute_89]") != std::string::npos);
  CHECK(cmd.find("arch=compute_90a,code=sm_90a") != std::string::npos);
  CHECK(cmd.find("--use_fast_math") != std::string::npos);
  CHECK(e->description == "nvcc pv_fp8 kernels/src/pv_fp8.cu [8.9 9.0a]");
  // The command writes a temporary beside the object and renames it.
  CHECK(e->temp.parent_path() == "/cache/objects");
  CHECK(e->temp != e->output);
  CHECK(e->command.find(e->argv.front()) != std::string::npos);
  CHECK(e->command.size() > joined(e->argv).size());
  CHECK(fp8->object.extension() == (kind == Kind::gnu ? ".o" : ".obj"));
}

TEST_CASE("every toolchain: two torch releases on one CUDA share the kernel objects") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto g = plan_compile({input(kind, "2.8.0"), input(kind, "2.9.1")}, repo.settings());
  REQUIRE(g.rows.size() == 2);
  CHECK(g.kernels_to_compile == 3);   // not 6
  CHECK(g.bindings_to_compile == 2);  // one per torch release
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(g.rows[0].extensions[0].kernels[i].object == g.rows[1].extensions[0].kernels[i].object);
  CHECK(g.rows[0].extensions[0].bindings[0].object != g.rows[1].extensions[0].bindings[0].object);
  CHECK(g.edges.size() == 3 + 2 + 2);  // kernels, bindings, links
  const Edge* l0 = edge_for(g, g.rows[0].extensions[0].path);
  const Edge* l1 = edge_for(g, g.rows[1].extensions[0].path);
  REQUIRE((l0 && l1));
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(l0->inputs[i] == g.rows[0].extensions[0].kernels[i].object);
    CHECK(l1->inputs[i] == g.rows[0].extensions[0].kernels[i].object);
  }
}

TEST_CASE("every toolchain: the two toolchains' objects never share a key") {
  FakeRepo repo;
  auto gnu = plan_compile({input(Kind::gnu, "2.11.0")}, repo.settings());
  auto msvc = plan_compile({input(Kind::msvc, "2.11.0")}, repo.settings());
  CHECK(gnu.rows[0].extensions[0].kernels[0].key != msvc.rows[0].extensions[0].kernels[0].key);
  CHECK(gnu.rows[0].extensions[0].bindings[0].key != msvc.rows[0].extensions[0].bindings[0].key);
}

TEST_CASE("every toolchain: objects already in the cache get no edge") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto g = plan_compile({input(kind, "2.9.1")}, repo.settings());
  for (const auto& k : g.rows[0].extensions[0].kernels) repo.objects.insert(k.object);
  auto again = plan_compile({input(kind, "2.9.1")}, repo.settings());
  CHECK(again.kernels_cached == 3);
  CHECK(again.kernels_to_compile == 0);
  CHECK(again.bindings_to_compile == 1);
  CHECK(again.edges.size() == 2);  // binding + link
  for (const auto& k : again.rows[0].extensions[0].kernels) CHECK(k.cached);
}

TEST_CASE("every toolchain: the binding's limited API, torch headers and key") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto g = plan_compile({input(kind, "2.9.1")}, repo.settings());
  const Edge* b = edge_for(g, g.rows[0].extensions[0].bindings[0].object);
  REQUIRE(b);
  auto cmd = joined(b->argv);
  CHECK(cmd.find("Py_LIMITED_API=0x030A0000") != std::string::npos);  // the oldest served Python
  CHECK(cmd.find("TORCH_EXTENSION_NAME=_C") != std::string::npos);
  CHECK(cmd.find("torch") != std::string::npos);
  CHECK(b->description == "c++ binding kernels/binding/ops.cc [torch 2.9.1+cu130]");
  // The torch build the headers come from is in the key.
  auto tc = toolchain(kind, "2.9.1");
  tc.torch.version = "2.9.1+cu128";
  auto other = plan_compile({input(kind, row(kind, "2.9.1"), manifest(), tc)}, repo.settings());
  CHECK(other.rows[0].extensions[0].bindings[0].key != g.rows[0].extensions[0].bindings[0].key);
  CHECK(other.rows[0].extensions[0].kernels[0].key == g.rows[0].extensions[0].kernels[0].key);
  // And libstdc++'s ABI, where the toolchain has one.
  tc = toolchain(kind, "2.9.1");
  tc.torch.cxx11_abi = false;
  auto old_abi = plan_compile({input(kind, row(kind, "2.9.1"), manifest(), tc)}, repo.settings());
  CHECK(old_abi.rows[0].extensions[0].bindings[0].key != g.rows[0].extensions[0].bindings[0].key);
  if (kind == Kind::gnu)
    CHECK(joined(edge_for(old_abi, old_abi.rows[0].extensions[0].bindings[0].object)->argv)
              .find("-D_GLIBCXX_USE_CXX11_ABI=0") != std::string::npos);
}

TEST_CASE("every toolchain: the launcher prefixes compiles, not links") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto in = input(kind, "2.11.0");
  in.site.launcher = {"/usr/bin/ccache"};
  auto g = plan_compile({in}, repo.settings());
  CHECK(edge_for(g, g.rows[0].extensions[0].kernels[0].object)->argv.front() == "/usr/bin/ccache");
  CHECK(edge_for(g, g.rows[0].extensions[0].path)->argv.front() != "/usr/bin/ccache");
}

TEST_CASE("every toolchain: manifest defines reach the binding; Py_LIMITED_API stays the row's") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto m = manifest();
  m.cxx_flags = {"-std=c++20", "-O2", "-fPIC", "-DSAGE_FLAG"};
  m.binding_defines = {"Py_LIMITED_API=0x03090000", "SAGE_EXTRA=1"};
  auto g = plan_compile({input(kind, "2.9.1", m)}, repo.settings());
  auto b = joined(edge_for(g, g.rows[0].extensions[0].bindings[0].object)->argv);
  CHECK(b.find("SAGE_EXTRA=1") != std::string::npos);
  CHECK(b.find("SAGE_FLAG") != std::string::npos);
  CHECK(b.find("c++20") != std::string::npos);
  CHECK(b.find("0x03090000") == std::string::npos);
  CHECK(b.find("Py_LIMITED_API=0x030A0000") != std::string::npos);
}

TEST_CASE("every toolchain: the CUDA runtime is linked as the manifest asks") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto m = manifest();
  m.cudart_static = true;
  auto g = plan_compile({input(kind, "2.9.1", m)}, repo.settings());
  CHECK(joined(edge_for(g, g.rows[0].extensions[0].path)->argv).find("cudart_static") != std::string::npos);
  m.cudart_static = false;
  g = plan_compile({input(kind, "2.9.1", m)}, repo.settings());
  CHECK(joined(edge_for(g, g.rows[0].extensions[0].path)->argv).find("cudart_static") == std::string::npos);
}

TEST_CASE("every toolchain: what a toolchain cannot express is refused by name") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto m = manifest();
  m.binding_sources.push_back("kernels/binding/extra.cc");
  CHECK_THROWS_WITH(plan_compile({input(kind, "2.9.1", m)}, repo.settings()), Catch::Contains("exactly one"));
  m = manifest();
  m.nvcc_flags = {"-std=c++14"};
  CHECK_THROWS_WITH(plan_compile({input(kind, "2.9.1", m)}, repo.settings()), Catch::Contains("-std=c++14"));
  m = manifest();
  m.cxx_flags = {"-march=native"};
  if (kind == Kind::msvc)
    CHECK_THROWS_WITH(plan_compile({input(kind, "2.9.1", m)}, repo.settings()),
                      Catch::Contains("-march=native") && Catch::Contains("families.json"));
  else
    CHECK(joined(plan_compile({input(kind, "2.9.1", m)}, repo.settings()).edges[3].argv).find("-march=native") !=
          std::string::npos);
}

TEST_CASE("an archs family gets SASS for its exact targets, never PTX") {
  auto f = sm90_family();
  std::vector<std::string> want = {"arch=compute_90a,code=sm_90a"};
  CHECK(family_gencode(f, {A("8.0"), A("8.9"), A("9.0")}, A("9.0")) == want);
  CHECK(family_gencode(f, {A("9.0a")}, std::nullopt) == want);
  CHECK(family_gencode(f, {A("9.0"), A("9.0a")}, A("9.0")) == want);  // once
  CHECK(family_gencode(f, {A("8.0"), A("8.9"), A("12.0")}, A("12.0")).empty());
  CHECK(family_targets(f, {A("8.9"), A("12.0")}).empty());
  f.archs = {A("9.0a"), A("10.0a")};
  CHECK(family_gencode(f, {A("8.0"), A("10.0")}, A("10.0")) ==
        std::vector<std::string>{"arch=compute_100a,code=sm_100a"});
  CHECK(family_gencode(f, {A("9.0"), A("10.0")}, A("10.0")) ==
        std::vector<std::string>{"arch=compute_90a,code=sm_90a", "arch=compute_100a,code=sm_100a"});
  CHECK(skip_reason(f) == "the row lists none of 9.0, 9.0a, 10.0, 10.0a (for its archs 9.0a, 10.0a)");
  KernelFamily floor{"pv_fp8", {"kernels/src/pv_fp8.cu"}, A("8.9")};
  CHECK(family_gencode(floor, {A("8.0"), A("8.9")}, A("8.9")) ==
        std::vector<std::string>{"arch=compute_89,code=[sm_89,compute_89]"});
  CHECK(skip_reason(floor) == "no arch >= min_arch 8.9");
}

TEST_CASE("every toolchain: an archs family is planned for rows listing its base arch, skipped otherwise") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto m = manifest_with_sm90();
  auto r = row(kind, "2.11.0", {A("8.0"), A("8.9"), A("9.0")});
  r.ptx_arch = A("9.0");
  auto g = plan_compile({input(kind, r, m, toolchain(kind, "2.11.0"))}, repo.settings());
  CHECK(g.rows[0].families == std::vector<std::string>{"pv_fp16", "pv_fp8", "quant", "sm90"});
  const PlannedObject* k = kernel_of(g.rows[0], "sm90");
  REQUIRE(k);
  auto cmd = joined(edge_for(g, k->object)->argv);
  CHECK(cmd.find("arch=compute_90a,code=sm_90a ") != std::string::npos);
  CHECK(cmd.find("code=compute_") == std::string::npos);  // no PTX
  const Edge* link = edge_for(g, g.rows[0].extensions[0].path);
  REQUIRE(link);
  CHECK(std::count(link->inputs.begin(), link->inputs.end(), k->object) == 1);
  // Its build_info record: the exact target this row builds.
  auto spec = extension_from_families(m, r);
  CHECK(spec.families.back().archs == std::vector<Arch>{A("9.0a")});
  auto without = plan_compile({input(kind, row(kind, "2.11.0", {A("8.0"), A("8.9")}), m, toolchain(kind, "2.11.0"))},
                              repo.settings());
  CHECK(without.rows[0].skipped_families ==
        std::vector<SkippedFamily>{{"sm90", "the row lists none of 9.0, 9.0a (for its archs 9.0a)"}});
  CHECK(kernel_of(without.rows[0], "sm90") == nullptr);
}

TEST_CASE("every toolchain: torch releases >= the stable minimum share one binding object and one extension") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto g = plan_compile({input(kind, "2.9.1", stable_manifest()), input(kind, "2.11.0", stable_manifest()),
                         input(kind, row(kind, "2.12.1"), stable_manifest(), toolchain(kind, "2.11.0")),
                         input(kind, "2.13.0", stable_manifest())},
                        repo.settings());
  REQUIRE(g.rows.size() == 4);
  CHECK(g.bindings_to_compile == 2);  // classic for 2.9.1, one stable object for the rest
  CHECK(g.links == 2);
  CHECK_FALSE(g.rows[0].extensions[0].stable_abi_target);
  for (int i = 1; i < 4; ++i) {
    CHECK(g.rows[i].extensions[0].bindings[0].key == g.rows[1].extensions[0].bindings[0].key);
    CHECK(g.rows[i].extensions[0].path == g.rows[1].extensions[0].path);
    CHECK(g.rows[i].extensions[0].stable_abi_target == std::optional<std::string>("2.10"));
  }
  CHECK(g.rows[0].extensions[0].path.parent_path().parent_path() == "/cache/work/default/rows");
  CHECK(g.rows[1].extensions[0].path.parent_path().parent_path() == "/cache/extensions");
  auto cmd = joined(edge_for(g, g.rows[1].extensions[0].bindings[0].object)->argv);
  CHECK(cmd.find("TORCH_TARGET_VERSION=0x020A000000000000") != std::string::npos);
  if (kind == Kind::gnu) CHECK(cmd.find("-ffile-prefix-map=/repo/=") != std::string::npos);
  auto link = joined(edge_for(g, g.rows[1].extensions[0].path)->argv);
  CHECK(link.find("c10") == std::string::npos);  // the C shim only
  CHECK(link.find("torch_cpu") != std::string::npos);
  CHECK(link.find("torch_cuda") != std::string::npos);
}

TEST_CASE("every toolchain: a shared extension already in the cache is not linked again") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto g = plan_compile({input(kind, "2.11.0", stable_manifest())}, repo.settings());
  for (const auto& k : g.rows[0].extensions[0].kernels) repo.objects.insert(k.object);
  repo.objects.insert(g.rows[0].extensions[0].bindings[0].object);
  repo.objects.insert(g.rows[0].extensions[0].path);
  auto again =
      plan_compile({input(kind, row(kind, "2.12.1"), stable_manifest(), toolchain(kind, "2.11.0"))}, repo.settings());
  CHECK(again.edges.empty());
  CHECK(again.links_cached == 1);
  CHECK(again.rows[0].extensions[0].cached);
  CHECK(again.rows[0].extensions[0].path == g.rows[0].extensions[0].path);
}

TEST_CASE("every toolchain: the stable binding key follows its target version, CUDA, flags and headers") {
  Kind kind = each_kind();
  FakeRepo repo;
  auto graph_of = [&](const KernelManifest& m, sb::toolchain::RowToolchain tc, const sb::matrix::Row& r) {
    return plan_compile({input(kind, r, m, std::move(tc))}, repo.settings()).rows[0];
  };
  auto base = graph_of(stable_manifest(), toolchain(kind, "2.11.0"), row(kind, "2.11.0"));
  auto m2 = stable_manifest();
  m2.stable_abi->target_version = {2, 11};
  m2.stable_abi->min_torch = {2, 11};
  CHECK(graph_of(m2, toolchain(kind, "2.11.0"), row(kind, "2.11.0")).extensions[0].bindings[0].key !=
        base.extensions[0].bindings[0].key);
  CHECK(graph_of(stable_manifest(), toolchain(kind, "2.11.0", "13.1.0"), row(kind, "2.11.0"))
            .extensions[0]
            .bindings[0]
            .key != base.extensions[0].bindings[0].key);
  auto archs = graph_of(stable_manifest(), toolchain(kind, "2.11.0"), row(kind, "2.11.0", {A("8.0")}));
  CHECK(archs.extensions[0].bindings[0].key == base.extensions[0].bindings[0].key);
  CHECK(archs.extensions[0].path != base.extensions[0].path);
  repo.files["/repo/kernels/include/sage/common.h"] += "// changed\n";
  auto edited = graph_of(stable_manifest(), toolchain(kind, "2.11.0"), row(kind, "2.11.0"));
  CHECK(edited.extensions[0].bindings[0].key != base.extensions[0].bindings[0].key);
  CHECK(edited.extensions[0].path != base.extensions[0].path);
}

TEST_CASE("a row planned for another host names its directories as that host will") {
  FakeRepo repo;
  auto in = input(Kind::msvc, "2.11.0");
  in.site = {"<SOURCE_DIR>", "<CACHE_DIR>/objects", "<CACHE_DIR>/extensions", "<BUILD_DIR>", {}};
  auto g = plan_compile({in}, repo.settings());
  CHECK(g.kernels_to_compile == 3);  // nothing is cached under a placeholder
  const Edge* k = edge_for(g, g.rows[0].extensions[0].kernels[0].object);
  REQUIRE(k);
  CHECK(k->command.find(R"(<SOURCE_DIR>\kernels\src\)") != std::string::npos);
  CHECK(k->command.find(R"(<CACHE_DIR>\objects\)") != std::string::npos);
  CHECK(k->command.find("/repo") == std::string::npos);
  CHECK(g.rows[0].extensions[0].path == fs::path("<BUILD_DIR>") / "rows" / in.row.id / "_C.pyd");
}

TEST_CASE("every toolchain: nvcc threads put a unit's archs side by side and split a one-arch unit, a constant") {
  Kind kind = each_kind();
  FakeRepo fx;
  auto in = input(kind, row(kind, "2.11.0"), manifest_with_sm90(), toolchain(kind, "2.11.0"));
  auto plan_with = [&](int threads) {
    PlanSettings st = fx.settings();
    st.nvcc_threads = threads;
    return plan_compile({in}, st);
  };
  const auto one = plan_with(1), two = plan_with(2), many = plan_with(16);
  auto command_of = [](const CompileGraph& g, const std::string& family) {
    return joined(edge_for(g, kernel_of(g.rows.at(0), family)->object)->argv);
  };
  const std::string split = "--split-compile=" + std::to_string(kSplitCompile);
  // one thread: each unit as nvcc always compiled it
  CHECK(command_of(one, "sm90").find("--split-compile") == std::string::npos);
  CHECK(command_of(one, "pv_fp16").find("--threads") == std::string::npos);
  // the 8.0 / 8.9 / 9.0a row: pv_fp16 has three archs, sm90 one
  CHECK(command_of(two, "pv_fp16").find("--threads=2") != std::string::npos);
  CHECK(command_of(many, "pv_fp16").find("--threads=3") != std::string::npos);
  CHECK(command_of(two, "pv_fp16").find("--split-compile") == std::string::npos);
  CHECK(command_of(two, "sm90").find(split) != std::string::npos);
  CHECK(command_of(many, "sm90").find(split) != std::string::npos);  // not the machine's core count
  // --threads leaves the object as it is: the same key for any count; the
  // split changes the cubin's layout: its own key, the same for any count > 1.
  CHECK(kernel_of(one.rows.at(0), "pv_fp16")->key == kernel_of(many.rows.at(0), "pv_fp16")->key);
  CHECK(kernel_of(one.rows.at(0), "sm90")->key != kernel_of(two.rows.at(0), "sm90")->key);
  CHECK(kernel_of(two.rows.at(0), "sm90")->key == kernel_of(many.rows.at(0), "sm90")->key);
}

TEST_CASE("every toolchain: nvcc threads by default are shared among the units compiled at once") {
  Kind kind = each_kind();
  FakeRepo fx;
  // the 8.0 / 8.9 / 9.0a row: four kernel units (pv_fp16 and quant three archs, pv_fp8 two, sm90 one)
  auto in = input(kind, row(kind, "2.11.0"), manifest_with_sm90(), toolchain(kind, "2.11.0"));
  auto plan_with = [&](int threads, bool shared) {
    PlanSettings st = fx.settings();
    st.nvcc_threads = threads;
    st.share_threads = shared;
    return plan_compile({in}, st);
  };
  auto command_of = [](const CompileGraph& g, const std::string& family) {
    return joined(edge_for(g, kernel_of(g.rows.at(0), family)->object)->argv);
  };
  const std::string split = "--split-compile=" + std::to_string(kSplitCompile);
  // 2 jobs, 4 units: one thread each (2 units of 2 threads on 2 cores cost more CPU than they save)
  const auto two = plan_with(2, true);
  REQUIRE(two.kernels_to_compile == 4);
  CHECK(command_of(two, "pv_fp16").find("--threads") == std::string::npos);
  CHECK(command_of(two, "quant").find("--threads") == std::string::npos);
  // the split is the same as with --nvcc-threads 2 given: the keys do not depend on the sharing
  CHECK(command_of(two, "sm90").find(split) != std::string::npos);
  const auto given = plan_with(2, false);
  for (const char* family : {"pv_fp16", "pv_fp8", "quant", "sm90"})
    CHECK(kernel_of(two.rows.at(0), family)->key == kernel_of(given.rows.at(0), family)->key);
  // 8 jobs: 2 threads a unit; 16 jobs: 4, at most a unit's archs
  CHECK(command_of(plan_with(8, true), "pv_fp16").find("--threads=2") != std::string::npos);
  const auto many = plan_with(16, true);
  CHECK(command_of(many, "pv_fp16").find("--threads=3") != std::string::npos);
  CHECK(command_of(many, "pv_fp8").find("--threads=2") != std::string::npos);
  // the cache holds the others: the one unit left gets every thread
  for (const char* family : {"pv_fp8", "quant", "sm90"}) fx.objects.insert(kernel_of(two.rows.at(0), family)->object);
  const auto warm = plan_with(2, true);
  REQUIRE(warm.kernels_to_compile == 1);
  CHECK(command_of(warm, "pv_fp16").find("--threads=2") != std::string::npos);
}
