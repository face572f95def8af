// The real matrix's profiles mean what their names say (the workflow builds
// them: .github/scripts/profiles.sh), and each row says where its torch
// comes from.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/test_support.h"
#include "sagebuild/matrix/version.h"

using namespace sb::matrix;
using namespace sb::matrix::testing;

namespace {

const Matrix& real() {
  static const Matrix m = load_matrix(real_matrix_path());
  return m;
}

std::vector<Row> rows_of(const std::string& profile) { return expand(real(), profile).rows; }

std::set<std::string> ids(const std::vector<Row>& rows) {
  std::set<std::string> out;
  for (const Row& r : rows) out.insert(r.id);
  return out;
}

// The N newest torch releases the matrix supports.
std::vector<std::string> newest_torch(std::size_t n) {
  std::vector<TorchVersion> all;
  for (const auto& t : real().torch) all.push_back(t.version);
  std::sort(all.begin(), all.end());
  std::vector<std::string> out;
  for (auto it = all.end() - static_cast<std::ptrdiff_t>(n); it != all.end(); ++it) out.push_back(it->str());
  return out;
}

const TorchVariant& pypi_variant_of(const std::string& torch) {
  for (const auto& t : real().torch)
    if (t.version.str() == torch)
      for (const auto& v : t.variants)
        if (v.pypi) return v;
  FAIL("torch " << torch << " has no PyPI variant");
  throw;
}

}  // namespace

TEST_CASE("profiles: default is one Linux row, default-windows its Windows twin") {
  auto linux_rows = rows_of("default");
  REQUIRE(linux_rows.size() == 1);
  CHECK(linux_rows[0].id == "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64");
  auto windows = rows_of("default-windows");
  REQUIRE(windows.size() == 1);
  CHECK(windows[0].id == "sageattention-2.2.0-torch2.11.0-cu130-abi3-win_amd64");
  CHECK(windows[0].build_python == linux_rows[0].build_python);
}

TEST_CASE("profiles: stable is the three newest torch releases on PyPI's CUDA, one wheel each per platform") {
  auto rows = rows_of("stable");
  CHECK(rows.size() == 6);  // 3 per platform, as the seeds' stable
  std::map<std::string, int> per_platform;
  std::set<std::string> torch;
  for (const Row& r : rows) {
    INFO(r.id);
    CHECK(r.package == "sageattention");
    CHECK(r.cuda == pypi_variant_of(r.torch.str()).cuda);
    ++per_platform[r.platform];
    torch.insert(r.torch.str());
  }
  CHECK(per_platform == std::map<std::string, int>{{"linux_x86_64", 3}, {"win_amd64", 3}});
  auto newest = newest_torch(3);
  CHECK(torch == std::set<std::string>(newest.begin(), newest.end()));
  CHECK(ids(rows) == std::set<std::string>{"sageattention-2.2.0-torch2.13.0-cu130-abi3-linux_x86_64",
                                           "sageattention-2.2.0-torch2.13.0-cu130-abi3-win_amd64",
                                           "sageattention-2.2.0-torch2.14.1-cu130-abi3-linux_x86_64",
                                           "sageattention-2.2.0-torch2.14.1-cu130-abi3-win_amd64",
                                           "sageattention-2.2.0-torch2.15.0-cu132-abi3-linux_x86_64",
                                           "sageattention-2.2.0-torch2.15.0-cu132-abi3-win_amd64"});
}

// (Rows on an opt-in platform, linux_aarch64, are only in the profiles that
// name it: default-aarch64, aarch64.)
TEST_CASE("profiles: sage2-all is every sageattention row; release the same, no sageattn3") {
  std::vector<Row> every;
  for (const Row& r : real().rows)
    if (r.package == "sageattention" && !r.platform_opt_in) every.push_back(r);
  CHECK(every.size() == 48);
  CHECK(ids(rows_of("sage2-all")) == ids(every));
  CHECK(ids(rows_of("release")) == ids(every));
}

TEST_CASE("profiles: pytorchNN is one torch release, pythonNNN one Python, sageattention only") {
  std::set<std::string> minors;
  for (const auto& t : real().torch) {
    std::set<std::string> expected;
    for (const Row& r : real().rows)
      if (r.package == "sageattention" && r.torch == t.version && !r.platform_opt_in) expected.insert(r.id);
    // 2.9.0 is there for sageattn3 alone; sageattention builds 2.9.1.
    if (t.version.str() == "2.9.0") {
      CHECK(expected.empty());
      continue;
    }
    std::string name = "pytorch" + t.version.minor_release().str();
    name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
    INFO(name);
    CHECK(minors.insert(name).second);  // one sageattention release per minor
    CHECK_FALSE(expected.empty());
    CHECK(ids(rows_of(name)) == expected);
  }
  for (const auto& python : real().pythons) {
    std::string name = "python" + python.nodot();
    INFO(name);
    std::set<std::string> expected;
    for (const Row& r : real().rows)
      if (r.package == "sageattention" && contains(r.pythons, python) && !r.platform_opt_in) expected.insert(r.id);
    CHECK(ids(rows_of(name)) == expected);
  }
  CHECK(rows_of("pytorch211").size() == 6);  // cu126, cu128, cu130 x Linux, Windows
  CHECK(rows_of("python39").size() == 12);   // torch 2.6-2.8 ship for 3.9
}

TEST_CASE("profiles: sageattn3 rows, which cannot build yet, are only in the sage3 profiles") {
  for (const auto& name : profile_names(real())) {
    INFO(name);
    bool sage3_profile = name.rfind("sage3", 0) == 0;
    for (const Row& r : rows_of(name)) CHECK((r.package == "sageattn3") == sage3_profile);
  }
  // Python 3.12, torch 2.9.0, CUDA 12.8 and 13.0, Linux and Windows, named
  // as sageattn3's build specification names them.
  std::set<std::string> wheels;
  for (const Row& r : rows_of("sage3")) {
    CHECK(r.pythons == std::vector<PythonVersion>{{3, 12}});
    CHECK(r.python_tag == "cp312");
    CHECK(r.torch.str() == "2.9.0");
    wheels.insert(r.wheel_filename);
  }
  CHECK(wheels == std::set<std::string>{"sageattn3-1.0.0+cu128torch2.9.0-cp312-cp312-linux_x86_64.whl",
                                        "sageattn3-1.0.0+cu128torch2.9.0-cp312-cp312-win_amd64.whl",
                                        "sageattn3-1.0.0+cu130torch2.9.0-cp312-cp312-linux_x86_64.whl",
                                        "sageattn3-1.0.0+cu130torch2.9.0-cp312-cp312-win_amd64.whl"});
  // One torch 2.9 release for sageattn3: 2.9.0 (2.9.1 is excluded for it).
  for (const Row& r : rows_of("sage3-all")) CHECK(r.torch.str() != "2.9.1");
}

TEST_CASE("rows: torch from PyPI where PyPI serves the row's CUDA build, else PyTorch's index") {
  std::size_t pypi = 0, index = 0;
  for (const Row& r : real().rows) {
    INFO(r.id);
    if (r.pypi_buildable) {
      CHECK(r.torch_index.empty());
      CHECK(r.platform.rfind("linux_", 0) == 0);
      CHECK(r.cuda == pypi_variant_of(r.torch.str()).cuda);
      ++pypi;
    } else {
      CHECK(r.torch_index == "https://download.pytorch.org/whl/" + r.cuda_tag);
      ++index;
    }
  }
  CHECK(pypi > 0);
  CHECK(index > 0);
  // PyPI's torch 2.10.0 is the CUDA 12.8 build: its CUDA 13.0 row needs the index.
  const Row* r = find_row(real(), "sageattention-2.2.0-torch2.10.0-cu130-abi3-linux_x86_64");
  REQUIRE(r);
  CHECK(r->torch_index == "https://download.pytorch.org/whl/cu130");
  // On Windows PyPI's torch is CPU-only: every row needs the index.
  r = find_row(real(), "sageattention-2.2.0-torch2.11.0-cu130-abi3-win_amd64");
  REQUIRE(r);
  CHECK(r->pypi_variant);
  CHECK(r->torch_index == "https://download.pytorch.org/whl/cu130");
}

TEST_CASE("profile filters default_cuda and newest_torch, and what they refuse") {
  std::string base = std::string(kBase);
  Matrix m = load_matrix(write_temp("filters.yaml", base + "  pypi_cuda:\n    default_cuda: true\n"
                                                           "  newest:\n    newest_torch: 1\n"));
  auto pypi = expand(m, "pypi_cuda").rows;
  REQUIRE(pypi.size() == 1);
  CHECK(pypi[0].cuda == CudaVersion{12, 8});
  CHECK(expand(m, "newest").rows.size() == 2);  // one torch release in kBase: both its rows
  std::string file;
  auto zero = load_error("newest0.yaml", base + "  none:\n    newest_torch: 0\n", &file);
  CHECK(zero == file + ":25:19: error: expected a count of at least 1 for 'newest_torch' of profile 'none', got '0'");
  std::string no_tag = base;
  no_tag.replace(no_tag.find("https://download.pytorch.org/whl/{cuda_tag}"), 43, "https://example.org/whl");
  std::string message = load_error("index.yaml", no_tag, &file);
  CHECK_THAT(message, Catch::StartsWith(file + ":3:") &&
                          Catch::EndsWith("error: torch_index 'https://example.org/whl' is not an https URL with "
                                          "one {cuda_tag} (the variant's code, cu128), like "
                                          "\"https://download.pytorch.org/whl/{cuda_tag}\""));
}

TEST_CASE("rows: the torch requirement follows the binding, which agrees with kernels/families.json") {
  std::ifstream in(std::filesystem::path(SAGEBUILD_SOURCE_DIR) / "kernels" / "families.json");
  REQUIRE(in);
  auto stable = nlohmann::json::parse(in)["binding"]["stable_abi"];
  const Package* sage2 = nullptr;
  for (const auto& p : real().packages)
    if (p.name == "sageattention") sage2 = &p;
  REQUIRE(sage2);
  // The matrix restates the binding rule the build takes from families.json.
  CHECK(sage2->stable_abi_min_torch->str() == stable["min_torch"].get<std::string>());
  CHECK(sage2->stable_abi_target->str() == stable["target_version"].get<std::string>());
  for (const Row& r : real().rows) {
    INFO(r.id);
    bool stable_row = r.package == "sageattention" && r.torch >= TorchVersion{2, 10};
    CHECK((r.torch_binding == sb::wheel::TorchBinding::stable_abi) == stable_row);
    if (stable_row)
      CHECK(r.torch_requirement == "torch>=2.10,<3");
    else
      CHECK(r.torch_requirement == "torch==" + r.torch.minor_release().str() + ".*");
  }
  CHECK(find_row(real(), "sageattention-2.2.0-torch2.8.0-cu128-abi3-linux_x86_64")->torch_requirement ==
        "torch==2.8.*");
}
