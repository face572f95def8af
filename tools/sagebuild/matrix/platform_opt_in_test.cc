// A platform with `opt_in: true` (linux_aarch64) adds rows only to the
// profiles that name it, and a package's `platform_archs` replaces its archs
// on that platform.
#include <catch2/catch.hpp>

#include <string>

#include "sagebuild/matrix/test_support.h"

using namespace sb::matrix;
using namespace sb::matrix::testing;

namespace {

// kBase with an opt-in aarch64 platform, the package's aarch64 archs, and
// two profiles: `default` (no platform filter) and `arm` (names it).
std::string with_aarch64(const std::string& archs_line) {
  std::string text = kBase;
  const std::string platform_line =
      "  linux_aarch64: {runner: ubuntu-24.04-arm, pypi_torch_has_cuda: true, opt_in: true, "
      "torch_index: \"https://download.pytorch.org/whl/{cuda_tag}\"}\n";
  text.insert(text.find("cuda:\n"), platform_line);
  text.insert(text.find("profiles:\n"), archs_line);
  text += "  arm: {platforms: [linux_aarch64]}\n";
  return text;
}

std::string row_archs(const Row& r) {
  std::string out;
  for (const auto& a : r.archs) out += (out.empty() ? "" : ",") + a.name();
  return out;
}

}  // namespace

TEST_CASE("an opt-in platform's rows are only in the profiles that name it", "[matrix][aarch64]") {
  auto path = write_temp("opt_in.yaml", with_aarch64("    platform_archs:\n"
                                                     "      linux_aarch64: {archs: [\"9.0\"], optional_archs: "
                                                     "[\"12.0\"]}\n"));
  Matrix m = load_matrix(path);
  for (const Row& r : expand(m, "default").rows) CHECK(r.platform == "linux_x86_64");
  CHECK(expand(m, "default").rows.size() == 2);
  auto arm = expand(m, "arm").rows;
  REQUIRE(arm.size() == 2);
  for (const Row& r : arm) {
    CHECK(r.platform == "linux_aarch64");
    CHECK(r.runner_os == "ubuntu-24.04-arm");
    CHECK(r.wheel_filename.find("-linux_aarch64.whl") != std::string::npos);
    // platform_archs, not the package's 8.0 / 9.0a; 12.0 where the CUDA builds it.
    CHECK(row_archs(r) == (r.cuda.release_str() == "12.8" ? "9.0,12.0" : "9.0"));
  }
}

TEST_CASE("platform_archs must name a known platform and at least one arch", "[matrix][aarch64]") {
  CHECK_THAT(load_error("pa_unknown.yaml", with_aarch64("    platform_archs:\n"
                                                        "      linux_arm64: {archs: [\"9.0\"]}\n")),
             Catch::Contains("platform_archs names platform 'linux_arm64'") &&
                 Catch::Contains("did you mean 'linux_aarch64'"));
  CHECK_THAT(load_error("pa_empty.yaml", with_aarch64("    platform_archs:\n"
                                                      "      linux_aarch64: {optional_archs: [\"9.0\"]}\n")),
             Catch::Contains("needs at least one arch in `archs`"));
  // A required arch the row's CUDA cannot build is an error at its line.
  std::string file;
  std::string err = load_error("pa_cuda.yaml",
                               with_aarch64("    platform_archs:\n"
                                            "      linux_aarch64: {archs: [\"12.0\"]}\n"),
                               &file);
  if (err == "no error") {
    Matrix m = load_matrix(file);
    CHECK_THROWS_WITH(expand(m, "arm"), Catch::Contains("cannot build it"));
  } else {
    CHECK_THAT(err, Catch::Contains("cannot build it"));
  }
}

TEST_CASE("the real matrix's aarch64 rows: opt-in, PyPI's CUDA torch only", "[matrix][aarch64]") {
  Matrix m = load_matrix(real_matrix_path());
  for (const char* profile : {"default", "stable", "release", "pypi", "sage2-all", "sage3", "python312"})
    for (const Row& r : expand(m, profile).rows) CHECK(r.platform != "linux_aarch64");
  auto rows = expand(m, "default-aarch64").rows;
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].id == "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_aarch64");
  CHECK(rows[0].wheel_filename == "sageattention-2.2.0-21100.130-cp310-abi3-linux_aarch64.whl");
  CHECK(rows[0].pypi_buildable);
  CHECK(row_archs(rows[0]) == "9.0,10.0,12.0");
  for (const Row& r : expand(m, "aarch64").rows) {
    CHECK(r.pypi_variant);
    CHECK(r.platform == "linux_aarch64");
  }
}
