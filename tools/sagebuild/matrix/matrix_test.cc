// The real matrix/build-matrix.yaml: it loads, every profile expands, and the
// rows obey the facts the file records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/test_support.h"
#include "sagebuild/matrix/version.h"

using sb::Arch;
using sb::contains_arch;
using sb::parse_arch;
using namespace sb::matrix;
using namespace sb::matrix::testing;

namespace {

const Matrix& real() {
  static const Matrix m = load_matrix(real_matrix_path());
  return m;
}

bool at_least(const TorchVersion& version, const char* minimum) { return version >= *TorchVersion::parse(minimum); }
bool at_least(const PythonVersion& version, const char* minimum) { return version >= *PythonVersion::parse(minimum); }
bool cuda_at_least(const Row& r, const CudaVersion& v) { return r.cuda >= v; }

}  // namespace

TEST_CASE("every profile of the real matrix expands to rows") {
  const Matrix& m = real();
  std::vector<std::string> names = profile_names(m);
  for (const char* expected : {"default", "stable", "pytorch26", "pytorch27", "pytorch28", "python310", "python311",
                               "python312", "sage2-all", "sage3", "sage3-all", "pytorch211"})
    CHECK(contains(names, expected));
  for (const auto& name : names) {
    INFO("profile " << name);
    Plan plan = expand(m, name);
    CHECK(plan.profile == name);
    CHECK_FALSE(plan.rows.empty());
    for (const Row& row : plan.rows) CHECK(find_row(m, row.id) != nullptr);
  }
}

TEST_CASE("the default profile is one row: torch 2.11.0 + CUDA 13.0 on Linux, serving 3.12") {
  Plan plan = expand(real(), "default");
  REQUIRE(plan.rows.size() == 1);
  const Row& r = plan.rows[0];
  CHECK(r.id == "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64");
  CHECK(r.torch.str() == "2.11.0");
  CHECK(r.cuda == CudaVersion{13, 0});
  CHECK(r.platform == "linux_x86_64");
  CHECK(r.runner_os == "ubuntu-22.04");
  CHECK(contains(r.pythons, PythonVersion{3, 12}));
  CHECK(r.python_tag == "cp310");
  CHECK(r.abi_tag == "abi3");
  // Built with the profile's Python, the one the target machine has.
  CHECK(r.build_python.str() == "3.12");
  CHECK(find_row(real(), r.id)->build_python.str() == "3.10");
  CHECK(r.requires_python == ">=3.10");
  CHECK(r.torch_requirement == "torch>=2.10,<3");  // the stable-ABI extension serves every torch >= 2.10
  CHECK(r.pypi_buildable);
  CHECK(r.build_tag == "21100.130");
  CHECK(r.wheel_filename == "sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl");
  CHECK(r.kernels_manifest == "kernels/families.json");
  // H100 runs it: the wheel carries SASS for sm_90 (the kernels use mma.sync).
  CHECK(contains_arch(r.archs, *parse_arch("9.0")));
  REQUIRE(r.ptx_arch);
  CHECK(r.ptx_arch->name() == "12.0");
}

TEST_CASE("abi3 rows collapse the Pythons of a torch release into one wheel") {
  const Matrix& m = real();
  const Row* r = find_row(m, "sageattention-2.2.0-torch2.8.0-cu128-abi3-linux_x86_64");
  REQUIRE(r != nullptr);
  CHECK(r->pythons == std::vector<PythonVersion>{{3, 9}, {3, 10}, {3, 11}, {3, 12}, {3, 13}});
  CHECK(r->python_tag == "cp39");
  CHECK(r->build_python.str() == "3.9");
  // No two sageattention rows differ only in Python.
  std::set<std::string> combos;
  for (const Row& row : m.rows)
    if (row.package == "sageattention")
      CHECK(combos.insert(row.torch.str() + "/" + row.cuda.release_str() + "/" + row.platform).second);
  // The python312 profile returns the same abi3 wheel, not a 3.12-only one.
  Plan py312 = expand(m, "python312");
  CHECK(std::any_of(py312.rows.begin(), py312.rows.end(),
                    [&](const Row& x) { return x.id == r->id && x.pythons == r->pythons; }));
}

TEST_CASE("sageattn3 rows are per-interpreter and within its minimums") {
  const Matrix& m = real();
  Plan plan = expand(m, "sage3-all");
  REQUIRE_FALSE(plan.rows.empty());
  for (const Row& r : plan.rows) {
    INFO(r.id);
    CHECK(r.package == "sageattn3");
    CHECK(r.abi_mode == AbiMode::per_interpreter);
    REQUIRE(r.pythons.size() == 1);
    CHECK(r.abi_tag == r.python_tag);
    CHECK(r.id.find("-" + r.python_tag + "-") != std::string::npos);
    CHECK(cuda_at_least(r, {12, 8}));
    CHECK(at_least(r.torch, "2.9"));
    CHECK(at_least(r.pythons[0], "3.12"));
    CHECK(r.naming == NamingScheme::local_version);
    CHECK(r.build_tag.empty());
    CHECK_FALSE(r.ptx_arch);  // both archs are arch-specific
  }
  const Row* r = find_row(m, "sageattn3-1.0.0-torch2.9.0-cu128-cp312-linux_x86_64");
  REQUIRE(r != nullptr);
  CHECK(r->wheel_filename == "sageattn3-1.0.0+cu128torch2.9.0-cp312-cp312-linux_x86_64.whl");
  CHECK(r->requires_python == ">=3.12");
  // Built from upstream's sageattention3_blackwell/ tree: no manifest of ours.
  CHECK(r->source == "upstream-sageattn3");
  CHECK(r->project == "sageattn3");
  CHECK(r->kernels_manifest.empty());
  // Its tree is upstream's, at the matrix's full commit id.
  REQUIRE(m.upstream);
  CHECK(r->upstream_repository == "thu-ml/SageAttention");
  CHECK(r->upstream_commit == m.upstream->commit);
  CHECK(r->upstream_commit.size() == 40);
  // One row per Python of torch 2.9.0 from 3.12 on.
  for (const char* tag : {"cp313", "cp314"})
    CHECK(find_row(m, std::string("sageattn3-1.0.0-torch2.9.0-cu128-") + tag + "-linux_x86_64"));
  CHECK_FALSE(find_row(m, "sageattn3-1.0.0-torch2.9.0-cu128-cp311-linux_x86_64"));
  CHECK_FALSE(find_row(m, "sageattn3-1.0.0-torch2.9.0-cu126-cp312-linux_x86_64"));
  // 2.9.1 is sageattention's 2.9 release, not sageattn3's.
  CHECK_FALSE(find_row(m, "sageattn3-1.0.0-torch2.9.1-cu128-cp312-linux_x86_64"));
  // Our own tree's rows name no upstream checkout.
  for (const Row& ours : m.rows)
    if (ours.source == "ours") CHECK((ours.upstream_repository.empty() && ours.upstream_commit.empty()));
}

TEST_CASE("newest_python keeps one sageattn3 row per torch x CUDA x platform") {
  // A profile of the real matrix's rows that asks for it (no profile of the
  // file does today).
  std::string text = sb::read_file(real_matrix_path()) +
                     "  sage3-newest: {description: x, packages: [sageattn3], platforms: [linux_x86_64], "
                     "pypi_only: true, newest_python: true}\n";
  Plan plan = expand(parse_matrix(text, "build-matrix.yaml"), "sage3-newest");
  REQUIRE(plan.rows.size() == 7);
  for (const Row& r : plan.rows) {
    CHECK(r.pythons == std::vector<PythonVersion>{{3, 14}});
    CHECK(r.pypi_buildable);
    CHECK(r.platform == "linux_x86_64");
  }
}

TEST_CASE("rows carry only archs their CUDA builds") {
  for (const Row& r : real().rows) {
    INFO(r.id);
    for (const Arch& a : r.archs) {
      if (cuda_at_least(r, {13, 0})) CHECK(a.sm >= 75);
      if (a.sm == 120) CHECK(cuda_at_least(r, {12, 8}));
      CHECK(cuda_builds(*find_cuda(real(), r.cuda), a));
    }
    CHECK(std::is_sorted(r.archs.begin(), r.archs.end()));
  }
  // 12.0 is optional for sageattention: present from CUDA 12.8, absent before.
  CHECK(contains_arch(find_row(real(), "sageattention-2.2.0-torch2.8.0-cu128-abi3-linux_x86_64")->archs,
                      *parse_arch("12.0")));
  CHECK_FALSE(contains_arch(find_row(real(), "sageattention-2.2.0-torch2.8.0-cu126-abi3-linux_x86_64")->archs,
                            *parse_arch("12.0")));
}

TEST_CASE("row ids are unique, and rows are in plan order") {
  std::set<std::string> ids;
  for (const Row& r : real().rows) CHECK(ids.insert(r.id).second);
  CHECK(ids.size() == real().rows.size());
}

TEST_CASE("ids and plans do not depend on the order of the YAML file") {
  // The same facts, with sections, entries and variants in another order.
  std::string a = std::string(kBase) + "  all: {}\n";
  std::string b =
      "profiles:\n  all: {}\n  default:\n    torch: [\"2.8.0\"]\n"
      "packages:\n  sageattention:\n    optional_archs: [\"12.0\"]\n    archs: [\"9.0a\", \"8.0\"]\n"
      "    naming: build-tag\n    abi: abi3\n    kernels: kernels/families.json\n    version: 2.2.0\n"
      "torch:\n  \"2.8.0\":\n    variants:\n      - {cuda: \"12.8\", pypi: true}\n      - {cuda: \"12.6\"}\n"
      "    pythons: [\"3.12\", \"3.10\"]\n"
      "cuda:\n  \"12.8\": {archs: [\"12.0\", \"9.0a\", \"9.0\", \"8.0\"]}\n  \"12.6\": {archs: [\"8.0\", \"9.0\", "
      "\"9.0a\"]}\n"
      "platforms:\n  linux_x86_64: {runner: ubuntu-22.04, pypi_torch_has_cuda: true, "
      "torch_index: \"https://download.pytorch.org/whl/{cuda_tag}\"}\n"
      "pythons: [\"3.12\", \"3.10\"]\n";
  Plan pa = expand(load_matrix(write_temp("order_a.yaml", a)), "all");
  Plan pb = expand(load_matrix(write_temp("order_b.yaml", b)), "all");
  REQUIRE(pa.rows.size() == 2);
  REQUIRE(pb.rows.size() == pa.rows.size());
  for (std::size_t i = 0; i < pa.rows.size(); ++i) {
    CHECK(pa.rows[i].id == pb.rows[i].id);
    CHECK(pa.rows[i].archs == pb.rows[i].archs);
    CHECK(pa.rows[i].pythons == pb.rows[i].pythons);
  }
  CHECK(pa.rows[0].id == "sageattention-2.2.0-torch2.8.0-cu126-abi3-linux_x86_64");
  CHECK(pa.rows[1].id == "sageattention-2.2.0-torch2.8.0-cu128-abi3-linux_x86_64");
}

TEST_CASE("pypi_buildable follows the PyPI variant, and Windows never has one") {
  const Matrix& m = real();
  for (const Row& r : m.rows) {
    INFO(r.id);
    const TorchRelease* t = find_torch(m, r.torch);
    bool pypi_variant = std::any_of(t->variants.begin(), t->variants.end(),
                                    [&](const TorchVariant& v) { return v.cuda == r.cuda && v.pypi; });
    CHECK(r.pypi_buildable == (pypi_variant && r.platform.rfind("linux_", 0) == 0));
  }
  Plan pypi = expand(m, "pypi");
  for (const Row& r : pypi.rows) CHECK(r.pypi_buildable);
}

TEST_CASE("exclusions and package minimums remove rows") {
  const Matrix& m = real();
  // win_amd64 x torch 2.6.0 is excluded; the Linux rows stay.
  CHECK(find_row(m, "sageattention-2.2.0-torch2.6.0-cu124-abi3-linux_x86_64"));
  CHECK_FALSE(find_row(m, "sageattention-2.2.0-torch2.6.0-cu124-abi3-win_amd64"));
  // sageattention needs CUDA 12.4: no cu118 rows.
  for (const Row& r : m.rows) CHECK(r.cuda != CudaVersion{11, 8});
  Plan p26 = expand(m, "pytorch26");
  for (const Row& r : p26.rows) CHECK(r.torch.str() == "2.6.0");
}

TEST_CASE("a profile's archs narrow each row's archs") {
  Matrix m = load_matrix(write_temp("narrow.yaml", std::string(kBase) + "  hopper:\n    archs: [\"9.0a\"]\n"));
  Plan plan = expand(m, "hopper");
  REQUIRE_FALSE(plan.rows.empty());
  for (const Row& r : plan.rows) {
    REQUIRE(r.archs.size() == 1);
    CHECK(r.archs[0].name() == "9.0a");
    CHECK_FALSE(r.ptx_arch);  // no PTX for an arch-specific target
  }
}

TEST_CASE("find_row finds rows outside any profile and nothing else") {
  CHECK(find_row(real(), "sageattention-2.2.0-torch2.15.0-cu132-abi3-win_amd64") != nullptr);
  CHECK(find_row(real(), "sageattention-2.2.0-torch2.15.0-cu999-abi3-win_amd64") == nullptr);
  CHECK(find_row(real(), "") == nullptr);
}

TEST_CASE("a profile of explicit rows selects exactly those") {
  std::string id = "sageattention-2.2.0-torch2.8.0-cu128-abi3-linux_x86_64";
  Matrix m = load_matrix(write_temp("rows.yaml", std::string(kBase) + "  one:\n    rows: [" + id + "]\n"));
  Plan plan = expand(m, "one");
  REQUIRE(plan.rows.size() == 1);
  CHECK(plan.rows[0].id == id);
  CHECK(expand(m, "default").rows.size() == 2);

  std::string both = std::string(kBase) + "  mixed:\n    rows: [" + id + "]\n    pypi_only: true\n";
  std::string file;
  std::string message = load_error("rows_mixed.yaml", both, &file);
  CHECK(message == file +
                       ":24:3: error: profile 'mixed' has both `rows` and filters; use one or the other "
                       "(rows name exact builds)");
}
