// The build-info record of a row (make_build_info): what each kernel family
// was built for, as verify's B6 will read it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/rows/stage.h"
#include "sagebuild/toolchain/gnu_toolchain.h"

using namespace sb::rows;
using sb::Arch;

namespace {

Arch A(const char* s) { return sb::parse_arch_arg(s, "test"); }

sb::plan::KernelManifest manifest() {
  sb::plan::KernelManifest m;
  m.families = {{"pv_fp8", {"kernels/src/attn_pv_fp8.cu"}, A("8.9"), "attn_pv_fp8_kernel"},
                {"quant", {"kernels/src/quant.cu"}, A("8.0"), "quant_qk_kernel"},
                {"sm90", {"kernels/src/attn_sm90.cu"}, std::nullopt, "attn_sm90_kernel", {A("9.0a"), A("10.0a")}}};
  m.binding_sources = {"kernels/binding/ops.cc"};
  return m;
}

sb::matrix::Row row(std::vector<Arch> archs) {
  sb::matrix::Row r;
  r.package = "sageattention";
  r.version = "2.2.0";
  r.abi_mode = sb::wheel::AbiMode::abi3;
  r.pythons = {{3, 10}};
  r.build_python = {3, 10};
  r.torch = {2, 11, 0, true};
  r.cuda = {13, 0};
  r.archs = std::move(archs);
  r.ptx_arch = r.archs.back();
  return r;
}

sb::distinfo::BuildInfo info_for(const sb::matrix::Row& r) {
  sb::toolchain::RowToolchain tc;
  tc.host = std::make_shared<sb::toolchain::GnuToolchain>(
      sb::toolchain::GnuTools{"/cuda/bin/nvcc", "13.0.88", "/usr/bin/g++", {"gcc", "12.2.0"}});
  tc.nvcc_version = "13.0.88";
  tc.row_torch_cuda = "13.0";
  return make_build_info(r, tc, sb::plan::extension_from_families(manifest(), r), "rev");
}

}  // namespace

TEST_CASE("build_info records an archs family's built targets and a min_arch family's floor") {
  auto b = info_for(row({A("8.0"), A("8.9"), A("9.0")}));
  CHECK(b.archs == std::vector<std::string>{"8.0", "8.9", "9.0"});
  REQUIRE(b.kernel_families.count("sm90"));
  // Only the target whose base arch the row lists: 9.0a, not 10.0a.
  CHECK(b.kernel_families["sm90"] == sb::distinfo::BuiltFamily{"", "attn_sm90_kernel", {"9.0a"}});
  CHECK(b.kernel_families["pv_fp8"] == sb::distinfo::BuiltFamily{"8.9", "attn_pv_fp8_kernel", {}});
  CHECK(b.host_compiler.id == "gcc");
  CHECK(b.host_compiler.version == "12.2.0");
  CHECK(b.cuda.nvcc == "13.0.88");
  CHECK(b.torch.cuda == "13.0");
  // A row listing 9.0a itself: the capability is 9.0, the family's target 9.0a.
  auto specific = info_for(row({A("8.0"), A("9.0a")}));
  CHECK(specific.archs == std::vector<std::string>{"8.0", "9.0"});
  CHECK(specific.kernel_families["sm90"].archs == std::vector<std::string>{"9.0a"});
}

TEST_CASE("build_info leaves out the families the row skipped") {
  auto b = info_for(row({A("8.0"), A("8.9")}));
  CHECK(b.kernel_families.size() == 2);
  CHECK_FALSE(b.kernel_families.count("sm90"));
}

TEST_CASE("a module is staged in its package's folder, or at the top") {
  CHECK(staged_module("sageattention._fused", "_fused.cpython-312-x86_64-linux-gnu.so", "/w/f.so").archive_name ==
        "sageattention/_fused.cpython-312-x86_64-linux-gnu.so");
  CHECK(staged_module("fp4attn_cuda", "fp4attn_cuda.cpython-312-x86_64-linux-gnu.so", "/w/a.so").archive_name ==
        "fp4attn_cuda.cpython-312-x86_64-linux-gnu.so");
  CHECK(staged_module("a.b._c", "_c.so", "/w/c.so").archive_name == "a/b/_c.so");
}

TEST_CASE("the package is staged without bytecode or stale modules, and only the globbed files when asked") {
  auto dir = std::filesystem::temp_directory_path() / "sb_stage_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "pkg/sub/__pycache__");
  for (const char* f : {"pkg/__init__.py", "pkg/sub/k.py", "pkg/sub/k.cu", "pkg/old.cpython-312.so",
                        "pkg/sub/__pycache__/k.cpython-312.pyc", "m.so"})
    std::ofstream(dir / f) << "x";
  std::vector<StagedModule> modules = {staged_module("pkg._m", "_m.so", dir / "m.so")};
  auto names = [](const std::vector<sb::pack::PayloadFile>& p) {
    std::vector<std::string> out;
    for (const auto& f : p) out.push_back(f.archive_name);
    return out;
  };
  CHECK(names(stage_payload(dir / "pkg", "pkg", {}, modules)) ==
        std::vector<std::string>{"pkg/__init__.py", "pkg/_m.so", "pkg/sub/k.cu", "pkg/sub/k.py"});
  CHECK(names(stage_payload(dir / "pkg", "pkg", {"*.py"}, modules)) ==
        std::vector<std::string>{"pkg/__init__.py", "pkg/_m.so", "pkg/sub/k.py"});
  CHECK_THROWS_AS(stage_payload(dir / "missing", "pkg", {}, modules), sb::UsageError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("staging applies the link rule the sdist applies: in-tree links as files, others refused", "[posix]") {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / "sb_stage_links_test";
  fs::remove_all(dir);
  fs::create_directories(dir / "tree/pkg");
  fs::create_directories(dir / "tree/data");
  std::ofstream(dir / "tree/pkg/__init__.py") << "x";
  std::ofstream(dir / "tree/data/table.txt") << "in the tree";
  std::ofstream(dir / "outside.txt") << "secret";
  fs::create_symlink("../data/table.txt", dir / "tree/pkg/table.txt");
  auto payload = stage_payload(dir / "tree/pkg", "pkg", {}, {}, dir / "tree");
  REQUIRE(payload.size() == 2);
  CHECK(payload[1].archive_name == "pkg/table.txt");
  // Staged as the file it points to: the wheel holds its bytes, no link.
  CHECK(std::get<fs::path>(payload[1].data) == fs::canonical(dir / "tree/data/table.txt"));
  // Inside the checkout but outside the package directory is still the tree;
  // outside the checkout is refused, naming the link.
  fs::create_symlink(dir / "outside.txt", dir / "tree/pkg/evil.py");
  CHECK_THROWS_WITH(stage_payload(dir / "tree/pkg", "pkg", {}, {}, dir / "tree"),
                    Catch::Contains("evil.py") && Catch::Contains("leaves the tree"));
  fs::remove(dir / "tree/pkg/evil.py");
  fs::create_symlink("nowhere", dir / "tree/pkg/dangling.py");
  CHECK_THROWS_WITH(stage_payload(dir / "tree/pkg", "pkg", {}, {}, dir / "tree"),
                    Catch::Contains("dangling.py") && Catch::Contains("cannot be resolved"));
  fs::remove(dir / "tree/pkg/dangling.py");
  fs::create_directory_symlink("../data", dir / "tree/pkg/sub");
  CHECK_THROWS_WITH(stage_payload(dir / "tree/pkg", "pkg", {}, {}, dir / "tree"), Catch::Contains("is a directory"));
  fs::remove_all(dir);
}
