// The planner and the ninja file, with an in-memory repository and fake
// toolchains: no nvcc, no torch, nothing written.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "sagebuild/run/ninja.h"
#include "sagebuild/plan/object_key.h"
#include "sagebuild/plan/plan.h"

using namespace sb::plan;
namespace fs = std::filesystem;
using sb::matrix::Arch;

namespace {

Arch A(const char* s) { return parse_arch_arg(s, "test"); }

struct FakeRepo {
  std::map<fs::path, std::string> files = {
      {"/repo/kernels/src/quant.cu", "#include \"sage/quant.h\"\n__global__ void q() {}\n"},
      {"/repo/kernels/src/pv_fp16.cu", "#include \"sage/common.h\"\n#include <cuda_fp16.h>\n"},
      {"/repo/kernels/src/pv_fp8.cu", "#include \"sage/common.h\"\n"},
      {"/repo/kernels/src/attn_sm90.cu", "#include \"sage/common.h\"\n__global__ void attn_sm90_kernel() {}\n"},
      {"/repo/kernels/include/sage/quant.h", "#pragma once\n#include \"common.h\"\n"},
      {"/repo/kernels/include/sage/common.h", "#pragma once\nconstexpr int kTile = 64;\n"},
      {"/repo/kernels/binding/ops.cc", "#include <torch/library.h>\n#include \"sage/quant.h\"\n"},
      {"/repo/kernels/binding/ops_stable.cc", "#include <torch/csrc/stable/library.h>\n#include \"sage/quant.h\"\n"},
  };
  std::set<fs::path> objects;  // what the object cache holds
  ReadFileFn reader() {
    return [this](const fs::path& p) -> std::optional<std::string> {
      auto it = files.find(p.lexically_normal());
      if (it == files.end()) return std::nullopt;
      return it->second;
    };
  }
  PlanSettings settings() {
    PlanSettings s;
    s.repo_root = "/repo";
    s.objects_dir = "/cache/objects";
    s.work_dir = "/cache/work/default";
    s.read = reader();
    s.exists = [this](const fs::path& p) { return objects.count(p) > 0; };
    return s;
  }
};

KernelManifest manifest() {
  KernelManifest m;
  m.path = "/repo/kernels/families.json";
  m.families = {{"pv_fp16", {"kernels/src/pv_fp16.cu"}, A("8.0")},
                {"pv_fp8", {"kernels/src/pv_fp8.cu"}, A("8.9")},
                {"quant", {"kernels/src/quant.cu"}, A("8.0")}};
  m.binding_sources = {"kernels/binding/ops.cc"};
  m.include_dirs = {"kernels/include"};
  m.nvcc_flags = {"--use_fast_math"};
  return m;
}

sb::matrix::Row row(const std::string& torch, std::vector<Arch> archs = {A("8.0"), A("8.9"), A("9.0a")}) {
  sb::matrix::Row r;
  r.id = "sageattention-2.2.0-torch" + torch + "-cu130-abi3-linux_x86_64";
  r.package = "sageattention";
  r.version = "2.2.0";
  r.abi_mode = sb::matrix::AbiMode::abi3;
  r.pythons = {"3.10", "3.11", "3.12"};
  r.build_python = "3.10";
  r.torch = torch;
  r.cuda = "13.0";
  r.archs = std::move(archs);
  r.ptx_arch = A("8.9");
  return r;
}

RowToolchain toolchain(const std::string& torch) {
  RowToolchain t;
  t.nvcc = "/cuda/bin/nvcc";
  t.nvcc_version = "13.0.88";
  t.cuda_include = "/cuda/include";
  t.cuda_lib = "/cuda/lib64";
  t.host_cxx = "/usr/bin/g++";
  t.host_compiler = "gcc 12.2.0";
  t.torch_root = "/cache/torch/" + torch;
  t.torch_version = torch + "+cu130";
  t.python_include = "/usr/include/python3.11";
  t.python_version = "3.11";
  return t;
}

const Edge* edge_for(const CompileGraph& g, const fs::path& out) {
  for (const auto& e : g.edges)
    if (e.output == out) return &e;
  return nullptr;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

}  // namespace

TEST_CASE("gencode flags per family min_arch, with PTX for the PTX arch") {
  std::vector<Arch> archs = {A("8.0"), A("8.9"), A("9.0a")};
  auto all = gencode_flags(archs, A("8.9"), A("8.0"));
  CHECK(all == std::vector<std::string>{"-gencode", "arch=compute_80,code=sm_80", "-gencode",
                                        "arch=compute_89,code=[sm_89,compute_89]", "-gencode",
                                        "arch=compute_90a,code=sm_90a"});
  auto fp8 = gencode_flags(archs, A("8.9"), A("8.9"));
  CHECK(fp8.size() == 4);
  CHECK(fp8[1] == "arch=compute_89,code=[sm_89,compute_89]");
  // The PTX arch not among the SASS archs gets compute_XX alone.
  auto ptx_only = gencode_flags({A("9.0a")}, A("8.0"), A("8.0"));
  CHECK(ptx_only == std::vector<std::string>{"-gencode", "arch=compute_90a,code=sm_90a", "-gencode",
                                             "arch=compute_80,code=compute_80"});
  CHECK(gencode_flags({A("8.0")}, A("8.0"), A("8.9")).empty());
}

TEST_CASE("Py_LIMITED_API and extension names") {
  CHECK(limited_api_hex("3.10") == "0x030A0000");
  CHECK(limited_api_hex("3.9") == "0x03090000");
  CHECK_THROWS(limited_api_hex("3"));
  auto r = row("2.11.0");
  CHECK(extension_file_name(r, "") == "_C.abi3.so");
  r.abi_mode = sb::matrix::AbiMode::per_interpreter;
  CHECK(extension_file_name(r, ".cpython-312-x86_64-linux-gnu.so") == "_C.cpython-312-x86_64-linux-gnu.so");
  CHECK_THROWS(extension_file_name(r, ""));
}

TEST_CASE("object keys follow the source, its headers and the flags, nothing else") {
  FakeRepo repo;
  auto read = repo.reader();
  ObjectKeyInput in{"/repo/kernels/src/quant.cu", "/repo", {"/repo/kernels/include"}, "nvcc 13.0.88 / gcc 12.2.0",
                    {"-O3", "-gencode", "arch=compute_80,code=sm_80"}, ""};
  auto k0 = object_key(in, read);
  CHECK(k0.size() == 64);
  CHECK(object_key(in, read) == k0);

  auto closure = include_closure(in.source, in.include_dirs, read);
  CHECK(closure.size() == 3);  // quant.cu, quant.h, and common.h through quant.h

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
  SECTION("a flag") {
    in.flags.push_back("--use_fast_math");
    CHECK(object_key(in, read) != k0);
  }
  SECTION("the arch set") {
    in.flags[2] = "arch=compute_90a,code=sm_90a";
    CHECK(object_key(in, read) != k0);
  }
  SECTION("the compiler version") {
    in.compiler = "nvcc 13.0.48 / gcc 12.2.0";
    CHECK(object_key(in, read) != k0);
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
  CHECK(scan_includes("#include \"a.h\"\n  #  include <b/c.h>\n// #include \"no\" is still a line? no: comment\n#define X\n") ==
        std::vector<std::string>{"a.h", "b/c.h"});
}

TEST_CASE("families are compiled only for the row archs at or above their min_arch") {
  FakeRepo repo;
  auto g = plan_compile({{row("2.11.0", {A("8.0")}), manifest(), toolchain("2.11.0")}}, repo.settings());
  REQUIRE(g.rows.size() == 1);
  CHECK(g.rows[0].families == std::vector<std::string>{"pv_fp16", "quant"});
  CHECK(g.rows[0].skipped_families == std::vector<SkippedFamily>{{"pv_fp8", "no arch >= min_arch 8.9"}});
  CHECK(g.kernels_to_compile == 2);
  auto g2 = plan_compile({{row("2.11.0"), manifest(), toolchain("2.11.0")}}, repo.settings());
  CHECK(g2.rows[0].families.size() == 3);
  // pv_fp8's command carries only 8.9 and 9.0a.
  const auto& fp8 = g2.rows[0].kernels[1];
  REQUIRE(fp8.family == "pv_fp8");
  const Edge* e = edge_for(g2, fp8.object);
  REQUIRE(e);
  auto cmd = joined(e->argv);
  CHECK(cmd.find("compute_80") == std::string::npos);
  CHECK(cmd.find("arch=compute_89,code=[sm_89,compute_89]") != std::string::npos);
  CHECK(cmd.find("arch=compute_90a,code=sm_90a") != std::string::npos);
  CHECK(cmd.find("-ccbin /usr/bin/g++") != std::string::npos);
  CHECK(cmd.find("--use_fast_math") != std::string::npos);
  CHECK(cmd.find("-Xcompiler=-fPIC") != std::string::npos);  // added: the manifest's flags lack it
  CHECK(e->temp.parent_path() == "/cache/objects");
  CHECK(e->temp != e->output);
}

TEST_CASE("two torch releases on one CUDA share the kernel objects") {
  FakeRepo repo;
  auto g = plan_compile({{row("2.10.0"), manifest(), toolchain("2.10.0")},
                         {row("2.11.0"), manifest(), toolchain("2.11.0")}},
                        repo.settings());
  REQUIRE(g.rows.size() == 2);
  CHECK(g.kernels_to_compile == 3);   // not 6
  CHECK(g.bindings_to_compile == 2);  // one per torch release
  for (std::size_t i = 0; i < 3; ++i) CHECK(g.rows[0].kernels[i].object == g.rows[1].kernels[i].object);
  CHECK(g.rows[0].binding.object != g.rows[1].binding.object);
  CHECK(g.edges.size() == 3 + 2 + 2);  // kernels, bindings, links
  // Both links consume the same kernel objects.
  const Edge* l0 = edge_for(g, g.rows[0].extension);
  const Edge* l1 = edge_for(g, g.rows[1].extension);
  REQUIRE(l0);
  REQUIRE(l1);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(l0->inputs[i] == g.rows[0].kernels[i].object);
    CHECK(l1->inputs[i] == g.rows[0].kernels[i].object);
  }
  // The ninja file builds each shared object exactly once.
  std::string ninja = write_ninja(g);
  auto obj = ninja_escape_path(g.rows[0].kernels[0].object.string());
  std::size_t first = ninja.find("build " + obj + ": run");
  REQUIRE(first != std::string::npos);
  CHECK(ninja.find("build " + obj + ": run", first + 1) == std::string::npos);
}

TEST_CASE("objects already in the cache get no edge") {
  FakeRepo repo;
  auto g = plan_compile({{row("2.11.0"), manifest(), toolchain("2.11.0")}}, repo.settings());
  for (const auto& k : g.rows[0].kernels) repo.objects.insert(k.object);
  auto again = plan_compile({{row("2.11.0"), manifest(), toolchain("2.11.0")}}, repo.settings());
  CHECK(again.kernels_cached == 3);
  CHECK(again.kernels_to_compile == 0);
  CHECK(again.bindings_to_compile == 1);
  CHECK(again.edges.size() == 2);  // binding + link
  for (const auto& k : again.rows[0].kernels) CHECK(k.cached);
}

TEST_CASE("the binding is compiled with the torch ABI, limited API and no rpath in the link") {
  FakeRepo repo;
  auto tc = toolchain("2.11.0");
  tc.cxx11_abi = false;
  auto g = plan_compile({{row("2.11.0"), manifest(), tc}}, repo.settings());
  const Edge* b = edge_for(g, g.rows[0].binding.object);
  REQUIRE(b);
  auto cmd = joined(b->argv);
  CHECK(cmd.find("-D_GLIBCXX_USE_CXX11_ABI=0") != std::string::npos);
  CHECK(cmd.find("-DPy_LIMITED_API=0x030A0000") != std::string::npos);  // the oldest served Python
  CHECK(cmd.find("-isystem/cache/torch/2.11.0/include ") != std::string::npos);
  CHECK(cmd.find("-std=c++17 -O2 -fPIC -fvisibility=hidden") != std::string::npos);  // defaults
  auto tc2 = tc;
  tc2.cxx11_abi = true;
  auto g2 = plan_compile({{row("2.11.0"), manifest(), tc2}}, repo.settings());
  CHECK(g2.rows[0].binding.key != g.rows[0].binding.key);
  const Edge* link = edge_for(g, g.rows[0].extension);
  REQUIRE(link);
  auto lcmd = joined(link->argv);
  CHECK(lcmd.find("rpath") == std::string::npos);
  CHECK(lcmd.find("-ltorch_cuda") != std::string::npos);
  CHECK(lcmd.find("-lcudart") != std::string::npos);
  CHECK(lcmd.find("-lstdc++") < lcmd.find("-lc10"));  // std:: symbols bind to libstdc++, versioned
  CHECK(g.rows[0].extension.filename() == "_C.abi3.so");
}

TEST_CASE("the launcher prefixes compiles, not links") {
  FakeRepo repo;
  auto st = repo.settings();
  st.launcher = {"/usr/bin/ccache"};
  auto g = plan_compile({{row("2.11.0"), manifest(), toolchain("2.11.0")}}, st);
  CHECK(edge_for(g, g.rows[0].kernels[0].object)->argv.front() == "/usr/bin/ccache");
  CHECK(edge_for(g, g.rows[0].extension)->argv.front() == "/usr/bin/g++");
}

TEST_CASE("ninja text: escaping, atomic commands, phony row targets") {
  CHECK(ninja_escape_path("a b:c$d") == "a$ b$:c$$d");
  CHECK(ninja_escape_value("x $y") == "x $$y");
  Edge e;
  e.output = "/o/x.o";
  e.temp = "/o/.x.tmp.o";
  e.argv = {"nvcc", "-o", "/o/.x.tmp.o", "code=[sm_89,compute_89]"};
  CHECK(edge_shell_command(e) == "nvcc -o /o/.x.tmp.o 'code=[sm_89,compute_89]' && mv -f /o/.x.tmp.o /o/x.o");
  FakeRepo repo;
  auto g = plan_compile({{row("2.11.0"), manifest(), toolchain("2.11.0")}}, repo.settings());
  auto text = write_ninja(g);
  CHECK(text.find("rule run\n  command = $cmd\n") != std::string::npos);
  CHECK(text.find("build " + g.rows[0].row_id + ": phony ") != std::string::npos);
  CHECK(text.find("default " + g.rows[0].row_id + "\n") != std::string::npos);
  CHECK(write_ninja(g) == text);  // deterministic
}

TEST_CASE("manifest flags and defines replace the defaults; Py_LIMITED_API stays the row's") {
  FakeRepo repo;
  auto m = manifest();
  m.nvcc_flags = {"-std=c++17", "-O3", "-Xcompiler=-fPIC"};
  m.cxx_flags = {"-std=c++20", "-O1", "-fPIC"};
  m.binding_defines = {"Py_LIMITED_API=0x03090000", "SAGE_EXTRA=1"};
  auto g = plan_compile({{row("2.11.0"), m, toolchain("2.11.0")}}, repo.settings());
  auto k = joined(edge_for(g, g.rows[0].kernels[0].object)->argv);
  CHECK(k.find("-fPIC") == k.rfind("-fPIC"));  // once
  auto b = joined(edge_for(g, g.rows[0].binding.object)->argv);
  CHECK(b.find("-std=c++20 -O1 -fPIC") != std::string::npos);
  CHECK(b.find("-DSAGE_EXTRA=1") != std::string::npos);
  CHECK(b.find("0x03090000") == std::string::npos);
  CHECK(b.find("-DPy_LIMITED_API=0x030A0000") != std::string::npos);
}

TEST_CASE("the CUDA runtime is linked as the manifest asks") {
  FakeRepo repo;
  auto m = manifest();
  m.cudart_static = true;
  auto g = plan_compile({{row("2.11.0"), m, toolchain("2.11.0")}}, repo.settings());
  auto l = joined(edge_for(g, g.rows[0].extension)->argv);
  CHECK(l.find("-l:libcudart_static.a -ldl -lrt -lpthread") != std::string::npos);
  CHECK(l.find("-lcudart ") == std::string::npos);
}

TEST_CASE("a manifest with two binding sources is refused") {
  FakeRepo repo;
  auto m = manifest();
  m.binding_sources.push_back("kernels/binding/extra.cc");
  CHECK_THROWS_WITH(plan_compile({{row("2.11.0"), m, toolchain("2.11.0")}}, repo.settings()),
                    Catch::Contains("exactly one"));
}

namespace {

// The families.json contract's Hopper family: exact target 9.0a.
KernelFamily sm90_family() {
  KernelFamily f;
  f.name = "sm90";
  f.sources = {"kernels/src/attn_sm90.cu"};
  f.archs = {A("9.0a")};
  f.symbol_marker = "attn_sm90_kernel";
  return f;
}

KernelManifest manifest_with_sm90() {
  auto m = manifest();
  m.families.push_back(sm90_family());
  return m;
}

const PlannedObject* kernel_of(const RowGraph& rg, const std::string& family) {
  for (const auto& k : rg.kernels)
    if (k.family == family) return &k;
  return nullptr;
}

}  // namespace

TEST_CASE("an archs family gets SASS for its exact targets, never PTX") {
  auto f = sm90_family();
  std::vector<std::string> want = {"-gencode", "arch=compute_90a,code=sm_90a"};
  // The row's 9.0 or 9.0a is the base arch of 9.0a; the PTX arch is ignored.
  CHECK(family_gencode_flags(f, {A("8.0"), A("8.9"), A("9.0")}, A("9.0")) == want);
  CHECK(family_gencode_flags(f, {A("9.0a")}, std::nullopt) == want);
  CHECK(family_gencode_flags(f, {A("9.0"), A("9.0a")}, A("9.0")) == want);  // once
  CHECK(family_gencode_flags(f, {A("8.0"), A("8.9"), A("12.0")}, A("12.0")).empty());
  CHECK(family_targets(f, {A("8.9"), A("12.0")}).empty());
  // Several targets: each only where the row lists its base arch.
  f.archs = {A("9.0a"), A("10.0a")};
  CHECK(family_gencode_flags(f, {A("8.0"), A("10.0")}, A("10.0")) ==
        std::vector<std::string>{"-gencode", "arch=compute_100a,code=sm_100a"});
  CHECK(family_gencode_flags(f, {A("9.0"), A("10.0")}, A("10.0")) ==
        std::vector<std::string>{"-gencode", "arch=compute_90a,code=sm_90a", "-gencode",
                                 "arch=compute_100a,code=sm_100a"});
  CHECK(skip_reason(f) == "the row lists none of 9.0, 9.0a, 10.0, 10.0a (for its archs 9.0a, 10.0a)");
  // A min_arch family goes through gencode_flags, PTX included.
  KernelFamily floor{"pv_fp8", {"kernels/src/pv_fp8.cu"}, A("8.9")};
  CHECK(family_gencode_flags(floor, {A("8.0"), A("8.9")}, A("8.9")) ==
        std::vector<std::string>{"-gencode", "arch=compute_89,code=[sm_89,compute_89]"});
  CHECK(skip_reason(floor) == "no arch >= min_arch 8.9");
}

TEST_CASE("an archs family is planned for rows listing its base arch and skipped, with the reason, otherwise") {
  FakeRepo repo;
  auto m = manifest_with_sm90();
  SECTION("a row with 9.0: built for sm_90a next to the min_arch families' sm_90") {
    auto r = row("2.11.0", {A("8.0"), A("8.9"), A("9.0")});
    r.ptx_arch = A("9.0");
    auto g = plan_compile({{r, m, toolchain("2.11.0")}}, repo.settings());
    CHECK(g.rows[0].families == std::vector<std::string>{"pv_fp16", "pv_fp8", "quant", "sm90"});
    CHECK(g.rows[0].skipped_families.empty());
    const PlannedObject* k = kernel_of(g.rows[0], "sm90");
    REQUIRE(k);
    const Edge* e = edge_for(g, k->object);
    REQUIRE(e);
    auto cmd = joined(e->argv);
    CHECK(cmd.find("-gencode arch=compute_90a,code=sm_90a ") != std::string::npos);
    CHECK(cmd.find("compute_80") == std::string::npos);
    CHECK(cmd.find("code=compute_") == std::string::npos);  // no PTX
    CHECK(cmd.find("code=[") == std::string::npos);
    CHECK(e->description == "nvcc sm90 kernels/src/attn_sm90.cu [9.0a]");
    // pv_fp8 keeps its plain sm_90 (and PTX): the fallback on a 9.0 GPU without sm90.
    auto fp8 = joined(edge_for(g, kernel_of(g.rows[0], "pv_fp8")->object)->argv);
    CHECK(fp8.find("arch=compute_90,code=[sm_90,compute_90]") != std::string::npos);
    // The link takes the sm90 object with the others.
    const Edge* link = edge_for(g, g.rows[0].extension);
    REQUIRE(link);
    CHECK(std::count(link->inputs.begin(), link->inputs.end(), k->object) == 1);
  }
  SECTION("a row without 9.0: skipped, and the reason names what it needs") {
    auto g = plan_compile({{row("2.11.0", {A("8.0"), A("8.9")}), m, toolchain("2.11.0")}}, repo.settings());
    CHECK(g.rows[0].families == std::vector<std::string>{"pv_fp16", "pv_fp8", "quant"});
    CHECK(g.rows[0].skipped_families ==
          std::vector<SkippedFamily>{{"sm90", "the row lists none of 9.0, 9.0a (for its archs 9.0a)"}});
    CHECK(kernel_of(g.rows[0], "sm90") == nullptr);
    CHECK(g.kernels_to_compile == 3);
  }
}

TEST_CASE("the object key of an archs family follows its targets, not the rest of the row's archs") {
  FakeRepo repo;
  auto m = manifest_with_sm90();
  auto wide = row("2.11.0", {A("8.0"), A("8.9"), A("9.0")});
  wide.ptx_arch = A("9.0");
  auto narrow = row("2.10.0", {A("9.0")});
  narrow.ptx_arch = A("9.0");
  auto specific = row("2.9.0", {A("9.0a")});
  specific.ptx_arch = std::nullopt;
  auto g = plan_compile({{wide, m, toolchain("2.11.0")}, {narrow, m, toolchain("2.10.0")},
                         {specific, m, toolchain("2.9.0")}},
                        repo.settings());
  // Every row builds sm90 for sm_90a alone: one object, compiled once.
  const auto* a = kernel_of(g.rows[0], "sm90");
  const auto* b = kernel_of(g.rows[1], "sm90");
  const auto* c = kernel_of(g.rows[2], "sm90");
  REQUIRE((a && b && c));
  CHECK(a->key == b->key);
  CHECK(a->key == c->key);
  // A min_arch family's key changes with the row's archs.
  CHECK(kernel_of(g.rows[0], "quant")->key != kernel_of(g.rows[1], "quant")->key);
  // The same source under other targets is another object.
  auto m2 = m;
  m2.families.back().archs = {A("9.0a"), A("10.0a")};
  auto wider = wide;
  wider.archs.push_back(A("10.0"));
  auto g2 = plan_compile({{wider, m2, toolchain("2.11.0")}}, repo.settings());
  CHECK(kernel_of(g2.rows[0], "sm90")->key != a->key);
}

namespace {
KernelManifest stable_manifest() {
  KernelManifest m = manifest();
  m.stable_abi = StableAbiBinding{"kernels/binding/ops_stable.cc", {2, 10}, {2, 10}};
  return m;
}
}  // namespace

TEST_CASE("torch releases >= the stable minimum share one binding object and one extension") {
  FakeRepo repo;
  auto g = plan_compile({{row("2.9.1"), stable_manifest(), toolchain("2.9.1")},
                         {row("2.11.0"), stable_manifest(), toolchain("2.11.0")},
                         {row("2.12.1"), stable_manifest(), toolchain("2.11.0")},   // compiled against 2.11's headers
                         {row("2.13.0"), stable_manifest(), toolchain("2.13.0")}},  // or its own
                        repo.settings());
  REQUIRE(g.rows.size() == 4);
  CHECK(g.bindings_to_compile == 2);  // classic for 2.9.1, one stable object for the rest
  CHECK(g.links == 2);
  CHECK(g.rows[0].binding.source == "/repo/kernels/binding/ops.cc");
  CHECK_FALSE(g.rows[0].stable_abi_target);
  for (int i = 1; i < 4; ++i) {
    CHECK(g.rows[i].binding.source == "/repo/kernels/binding/ops_stable.cc");
    CHECK(g.rows[i].binding.key == g.rows[1].binding.key);
    CHECK(g.rows[i].extension == g.rows[1].extension);
    CHECK(g.rows[i].stable_abi_target == std::optional<std::string>("2.10"));
  }
  CHECK(g.rows[0].binding.key != g.rows[1].binding.key);
  CHECK(g.rows[0].extension.parent_path().parent_path() == "/cache/work/default/rows");
  CHECK(g.rows[1].extension.parent_path().parent_path() == "/cache/extensions");
  const Edge* b = edge_for(g, g.rows[1].binding.object);
  REQUIRE(b);
  auto cmd = joined(b->argv);
  CHECK(cmd.find("-DTORCH_TARGET_VERSION=0x020A000000000000") != std::string::npos);
  CHECK(cmd.find("-ffile-prefix-map=/repo/=") != std::string::npos);
  const Edge* link = edge_for(g, g.rows[1].extension);
  REQUIRE(link);
  auto lcmd = joined(link->argv);
  CHECK(lcmd.find("-lc10 ") == std::string::npos);  // the C shim only
  CHECK(lcmd.find("-Wl,--as-needed -ltorch_cpu -ltorch_cuda -Wl,--no-as-needed") != std::string::npos);
  CHECK(edge_for(g, g.rows[0].extension) != nullptr);
}

TEST_CASE("the stable binding key still follows its source, target version, flags and kernels") {
  FakeRepo repo;
  auto key_of = [&](KernelManifest m, RowToolchain tc, sb::matrix::Row r) {
    return plan_compile({{r, m, tc}}, repo.settings()).rows[0];
  };
  auto base = key_of(stable_manifest(), toolchain("2.11.0"), row("2.11.0"));
  auto m2 = stable_manifest();
  m2.stable_abi->target_version = {2, 11};
  m2.stable_abi->min_torch = {2, 11};
  CHECK(key_of(m2, toolchain("2.11.0"), row("2.11.0")).binding.key != base.binding.key);
  auto tc = toolchain("2.11.0");
  tc.nvcc_version = "13.1.0";
  auto other_cuda = key_of(stable_manifest(), tc, row("2.11.0"));
  CHECK(other_cuda.binding.key != base.binding.key);
  auto m3 = stable_manifest();
  m3.cxx_flags = {"-std=c++17", "-O3"};
  CHECK(key_of(m3, toolchain("2.11.0"), row("2.11.0")).binding.key != base.binding.key);
  // Other archs: other kernel objects, so another extension, same binding.
  auto archs = key_of(stable_manifest(), toolchain("2.11.0"), row("2.11.0", {A("8.0")}));
  CHECK(archs.binding.key == base.binding.key);
  CHECK(archs.extension != base.extension);
  repo.files["/repo/kernels/include/sage/common.h"] += "// changed\n";
  auto edited = key_of(stable_manifest(), toolchain("2.11.0"), row("2.11.0"));
  CHECK(edited.binding.key != base.binding.key);
  CHECK(edited.extension != base.extension);
}

TEST_CASE("a shared extension already in the cache is not linked again") {
  FakeRepo repo;
  auto g = plan_compile({{row("2.11.0"), stable_manifest(), toolchain("2.11.0")}}, repo.settings());
  for (const auto& k : g.rows[0].kernels) repo.objects.insert(k.object);
  repo.objects.insert(g.rows[0].binding.object);
  repo.objects.insert(g.rows[0].extension);
  auto again = plan_compile({{row("2.12.1"), stable_manifest(), toolchain("2.11.0")}}, repo.settings());
  CHECK(again.edges.empty());
  CHECK(again.links_cached == 1);
  CHECK(again.rows[0].extension_cached);
  CHECK(again.rows[0].extension == g.rows[0].extension);
}
