// The kernel-objects directory's manifest and the checks a build that takes
// its objects makes (kernel_objects.h), with the planner: a row planned
// kernels-only has no binding and no link; a row planned from a directory
// compiles no kernel, and a unit whose key the directory does not list, or
// whose file there was altered, is refused by name.
#include <catch2/catch.hpp>

#include <string>

#include "sagebuild/common/error.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/plan/kernel_objects.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/plan/plan_test_support.h"

using namespace sb::plan;
using namespace sb::plan::testing;
namespace fs = std::filesystem;

namespace {

std::string key_of(char c) { return std::string(64, c); }

KernelObjectEntry entry(const std::string& family, const std::string& source, const std::string& key,
                        const std::string& bytes) {
  return {family, source, {"8.0", "8.9"}, key, key + ".o", sb::hex(sb::sha256(bytes)), "nvcc 13.0.88 / gcc 12.2.0"};
}

// A directory of the kernel objects `g` planned for its first row, as
// --kernels-only writes it, in the fake repository's files.
KernelObjects handed_set(const CompileGraph& g, FakeRepo& repo, const fs::path& dir) {
  KernelObjects set;
  for (const auto& k : g.rows[0].extensions[0].kernels) {
    std::string bytes = "object " + k.key;
    repo.files[dir / (k.key + ".o")] = bytes;
    add_kernel_object(set, entry(k.family, k.source.lexically_relative("/repo").generic_string(), k.key, bytes),
                      g.rows[0].row_id);
  }
  return set;
}

}  // namespace

TEST_CASE("the manifest round-trips, sorted by key, one entry per key") {
  KernelObjects set;
  add_kernel_object(set, entry("quant", "kernels/quant.cu", key_of('b'), "x"), "row-2");
  add_kernel_object(set, entry("pv_fp8", "kernels/pv_fp8.cu", key_of('a'), "y"), "row-1");
  add_kernel_object(set, entry("quant", "kernels/quant.cu", key_of('b'), "x"), "row-1");  // same key: once
  REQUIRE(set.objects.size() == 2);
  CHECK(set.objects[0].key == key_of('a'));
  CHECK(set.rows == std::vector<std::string>{"row-1", "row-2"});
  std::string text = kernel_objects_json(set);
  CHECK(parse_kernel_objects(text, "m.json") == set);
  CHECK(kernel_objects_json(parse_kernel_objects(text, "m.json")) == text);
}

TEST_CASE("an entry of the same unit under another key is superseded: replaced, its file named") {
  KernelObjects set;
  CHECK(add_kernel_object(set, entry("quant", "kernels/quant.cu", key_of('a'), "old"), "row-1").empty());
  CHECK(add_kernel_object(set, entry("pv_fp8", "kernels/pv_fp8.cu", key_of('b'), "y"), "row-1").empty());
  auto other_archs = entry("quant", "kernels/quant.cu", key_of('c'), "z");
  other_archs.targets = {"9.0"};
  CHECK(add_kernel_object(set, other_archs, "row-2").empty());  // another unit: its targets differ
  auto other_compiler = entry("quant", "kernels/quant.cu", key_of('d'), "w");
  other_compiler.compiler = "nvcc 12.8.93 / gcc 13.3.0";
  CHECK(add_kernel_object(set, other_compiler, "row-3").empty());
  // quant.cu edited: its new object replaces the old one of the same targets and compiler
  auto gone = add_kernel_object(set, entry("quant", "kernels/quant.cu", key_of('e'), "new"), "row-1");
  CHECK(gone == std::vector<std::string>{key_of('a') + ".o"});
  std::vector<std::string> keys;
  for (const auto& e : set.objects) keys.push_back(e.key);
  CHECK(keys == std::vector<std::string>{key_of('b'), key_of('c'), key_of('d'), key_of('e')});
  // the same key again: nothing superseded, nothing added
  CHECK(add_kernel_object(set, entry("quant", "kernels/quant.cu", key_of('e'), "new"), "row-1").empty());
  CHECK(set.objects.size() == 4);
}

TEST_CASE("a malformed manifest is refused naming the file and the field") {
  auto refused = [](const std::string& text, const std::string& what) {
    try {
      parse_kernel_objects(text, "DIR/kernel-objects.json");
      FAIL("accepted: " << text);
    } catch (const sb::UsageError& e) {
      std::string msg = e.what();
      CHECK(msg.rfind("DIR/kernel-objects.json", 0) == 0);
      CHECK(msg.find(what) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
  };
  refused("not json", "not a JSON object");
  refused(R"({"format": "other", "rows": [], "objects": []})", "\"format\"");
  std::string head = R"({"format": "sagebuild-kernel-objects-v1", "rows": ["r"], "objects": [)";
  std::string k = key_of('c');
  auto obj = [&](const std::string& key, const std::string& file) {
    return R"({"family": "quant", "source": "kernels/quant.cu", "targets": ["9.0"], "key": ")" + key +
           R"(", "file": ")" + file + R"(", "sha256": ")" + key_of('d') + R"(", "compiler": "nvcc"})";
  };
  CHECK(parse_kernel_objects(head + obj(k, k + ".o") + "]}", "m").objects.size() == 1);
  refused(head + obj("abc", "abc.o") + "]}", "not an object key");
  refused(head + obj(k, "../" + k + ".o") + "]}", "is not its key's object");
  refused(head + obj(k, k + ".o") + "," + obj(k, k + ".o") + "]}", "listed twice");
  refused(head + R"({"family": "quant"}]})", "objects[0]: expected \"source\"");
}

TEST_CASE("every toolchain: a row planned kernels-only has its kernel objects and nothing else") {
  Kind kind = GENERATE(Kind::gnu, Kind::msvc);
  FakeRepo repo;
  PlanSettings st = repo.settings();
  st.kernels_only = true;
  auto g = plan_compile({input(kind, "2.11.0")}, st);
  CHECK(g.kernels_to_compile == 3);
  CHECK(g.bindings_to_compile == 0);
  CHECK(g.links == 0);
  CHECK(g.edges.size() == 3);
  REQUIRE(g.rows[0].extensions.size() == 1);
  CHECK(g.rows[0].extensions[0].bindings.empty());
  CHECK(g.rows[0].extensions[0].path.empty());
  // The same keys as a full build's: what the row jobs will compute.
  auto full = plan_compile({input(kind, "2.11.0")}, repo.settings());
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(g.rows[0].extensions[0].kernels[i].key == full.rows[0].extensions[0].kernels[i].key);
}

TEST_CASE("every toolchain: a row of the same CUDA takes every kernel from the directory and compiles none") {
  Kind kind = GENERATE(Kind::gnu, Kind::msvc);
  FakeRepo repo;
  PlanSettings only = repo.settings();
  only.kernels_only = true;
  // The kernel job's row is torch 2.9.1; the row built from the directory torch 2.11.0.
  auto kg = plan_compile({input(kind, "2.9.1")}, only);
  KernelObjects set = handed_set(kg, repo, "/handed");
  PlanSettings st = repo.settings();
  st.handed = &set;
  st.handed_dir = "/handed";
  auto g = plan_compile({input(kind, "2.11.0")}, st);
  CHECK(g.kernels_to_compile == 0);
  CHECK(g.kernels_cached == 3);
  CHECK(g.bindings_to_compile == 1);
  CHECK(g.links == 1);
  for (const auto& k : g.rows[0].extensions[0].kernels) {
    CHECK(k.cached);
    CHECK(k.object == fs::path("/handed") / (k.key + ".o"));
    CHECK(edge_for(g, k.object) == nullptr);
  }
  // The link takes them from there.
  const auto* link = edge_for(g, g.rows[0].extensions[0].path);
  REQUIRE(link);
  for (const auto& k : g.rows[0].extensions[0].kernels)
    CHECK(std::find(link->inputs.begin(), link->inputs.end(), k.object) != link->inputs.end());
}

TEST_CASE("every toolchain: a directory that does not match is refused, naming unit, keys and fix") {
  Kind kind = GENERATE(Kind::gnu, Kind::msvc);
  FakeRepo repo;
  PlanSettings only = repo.settings();
  only.kernels_only = true;
  auto kg = plan_compile({input(kind, "2.9.1")}, only);
  KernelObjects set = handed_set(kg, repo, "/handed");
  PlanSettings st = repo.settings();
  st.handed = &set;
  st.handed_dir = "/handed";
  auto refusal = [&](const std::vector<RowInput>& rows) -> std::string {
    try {
      plan_compile(rows, st);
    } catch (const HandedObjectError& e) {
      std::string msg = e.what();
      CHECK(msg.find('\n') == std::string::npos);
      CHECK(msg.find("fix: rebuild the directory") != std::string::npos);
      CHECK(msg.find("--kernels-only --kernel-objects /handed") != std::string::npos);
      return msg;
    }
    FAIL("the directory was taken");
    return "";
  };
  std::string quant_key = kernel_of(kg.rows[0], "quant")->key;

  SECTION("a header changed since: another key, both named") {
    repo.files["/repo/kernels/include/sage/quant.h"] += "// changed\n";
    auto now = plan_compile({input(kind, "2.11.0")}, repo.settings());
    std::string want = kernel_of(now.rows[0], "quant")->key;
    REQUIRE(want != quant_key);
    std::string msg = refusal({input(kind, "2.11.0")});
    CHECK(msg.find("kernel unit quant kernels/src/quant.cu [") != std::string::npos);
    CHECK(msg.find("expected key " + want + ", found key " + quant_key) != std::string::npos);
  }
  SECTION("another compiler: every unit's key differs") {
    auto in = input(kind, row(kind, "2.11.0"), manifest(), toolchain(kind, "2.11.0", "13.0.48"));
    CHECK(refusal({in}).find("found key") != std::string::npos);
  }
  SECTION("a unit the directory has no object of") {
    auto in = input(kind, row(kind, "2.11.0", {A("8.0"), A("8.9"), A("9.0a")}), manifest_with_sm90(),
                    toolchain(kind, "2.11.0"));
    std::string msg = refusal({in});
    CHECK(msg.find("kernel unit sm90 kernels/src/attn_sm90.cu [9.0a]") != std::string::npos);
    CHECK(msg.find("found none") != std::string::npos);
  }
  SECTION("an object file altered or removed after the manifest was written") {
    repo.files[fs::path("/handed") / (quant_key + ".o")] = "tampered";
    CHECK(refusal({input(kind, "2.11.0")}).find("altered after it was made") != std::string::npos);
    repo.files.erase(fs::path("/handed") / (quant_key + ".o"));
    CHECK(refusal({input(kind, "2.11.0")}).find("is missing") != std::string::npos);
  }
  SECTION("nothing is compiled instead: the refusal is the only outcome") {
    repo.files["/repo/kernels/src/pv_fp8.cu"] += "// changed\n";
    CHECK_THROWS_AS(plan_compile({input(kind, "2.11.0")}, st), HandedObjectError);
  }
}

TEST_CASE("a missing directory or manifest is refused with how to make one") {
  fs::path dir = fs::temp_directory_path() / "sagebuild-kernel-objects-test-missing";
  fs::remove_all(dir);
  CHECK_THROWS_WITH(load_kernel_objects(dir),
                    Catch::Contains("no such directory") && Catch::Contains("--kernels-only --kernel-objects"));
  fs::create_directories(dir);
  CHECK_THROWS_WITH(load_kernel_objects(dir), Catch::Contains("no kernel-objects.json in it"));
  fs::remove_all(dir);
}
