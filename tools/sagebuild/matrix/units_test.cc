// The small pieces: versions, suggestions, wheel names, file lookup.
#include <catch2/catch.hpp>

#include "sagebuild/matrix/locate.h"
#include "sagebuild/matrix/suggest.h"
#include "sagebuild/matrix/test_support.h"
#include "sagebuild/matrix/version.h"
#include "sagebuild/matrix/wheel_name.h"

using namespace sb::matrix;

TEST_CASE("dotted versions parse strictly and compare numerically") {
  CHECK(DottedVersion::parse("3.10")->parts == std::vector<int>{3, 10});
  for (const char* bad : {"", "3.", ".3", "3..1", "v3", "3.010", "3.1a", "3.1 "})
    CHECK_FALSE(DottedVersion::parse(bad));
  CHECK(*DottedVersion::parse("3.9") < *DottedVersion::parse("3.10"));
  CHECK(*DottedVersion::parse("12.8") == *DottedVersion::parse("12.8.0"));
  CHECK(*DottedVersion::parse("2.9") < *DottedVersion::parse("2.9.1"));
}

TEST_CASE("torch versions parse as major.minor[.patch], keep how they were written, compare numerically") {
  auto v = TorchVersion::parse("2.11.0");
  REQUIRE(v);
  CHECK(v->major == 2);
  CHECK(v->minor == 11);
  CHECK(v->patch == 0);
  CHECK(v->str() == "2.11.0");
  CHECK(TorchVersion::parse("2.10")->str() == "2.10");
  CHECK(*TorchVersion::parse("2.10") == *TorchVersion::parse("2.10.0"));
  CHECK(*TorchVersion::parse("2.9.1") < *TorchVersion::parse("2.10.0"));  // numeric, not text order
  CHECK(TorchVersion::parse("2.12.1")->minor_release() == TorchVersion{2, 12});
  CHECK(TorchVersion::parse("2.12.1")->minor_release().str() == "2.12");
  for (const char* bad : {"", "2", "2.11.0.1", "2.x", "2.011.0", "2.11.0+cu130", "v2.11"})
    CHECK_FALSE(TorchVersion::parse(bad));
  CHECK(TorchVersion::parse_installed("2.12.1+cu130") == TorchVersion{2, 12, 1, true});
  CHECK(TorchVersion::parse_installed("2.11.0") == TorchVersion{2, 11, 0, true});
  for (const char* bad : {"2.11.0+", "2.12.0a0+git1234", "two"}) CHECK_FALSE(TorchVersion::parse_installed(bad));
  CHECK(TorchVersion::parse("2.11.0")->wheel_release().str() == "2.11.0");
  CHECK(TorchVersion::parse("2.10")->wheel_release().str() == "2.10");
}

TEST_CASE("Python versions parse as major.minor") {
  CHECK(PythonVersion::parse("3.12") == PythonVersion{3, 12});
  CHECK(PythonVersion::parse("3.12")->str() == "3.12");
  CHECK(PythonVersion::parse("3.12")->nodot() == "312");
  CHECK(PythonVersion{3, 9} < PythonVersion{3, 10});
  for (const char* bad : {"", "3", "3.12.1", "3.x", "3.012", "cp312"}) CHECK_FALSE(PythonVersion::parse(bad));
}

TEST_CASE("CUDA versions parse as major.minor and give the code and tag wheel names carry") {
  CHECK(CudaVersion::parse_release("12.8") == CudaVersion{12, 8, 0});
  CHECK(CudaVersion::parse_release("12.10") == CudaVersion{12, 10, 0});
  for (const char* bad : {"", "12", "12.8.1", "12.08", "v12.8", "12.8 ", "12.x"})
    CHECK_FALSE(CudaVersion::parse_release(bad));
  CudaVersion nvcc{13, 0, 88};
  CHECK(nvcc.release_str() == "13.0");
  CHECK(nvcc.full_str() == "13.0.88");
  CHECK(nvcc.release() == CudaVersion{13, 0, 0});
  CHECK(nvcc != nvcc.release());
  CHECK(CudaVersion{12, 9, 0} < CudaVersion{12, 10, 0});
  CHECK(CudaVersion{12, 9, 0} < CudaVersion{13, 0, 0});
  CHECK(CudaVersion{12, 8, 0}.code() == "128");
  CHECK(CudaVersion{12, 10, 0}.code() == "1210");
  CHECK(CudaVersion{13, 0, 88}.tag() == "cu130");
  CHECK(CudaVersion{12, 10, 0}.tag() == "cu1210");
  std::string why;
  CHECK_FALSE(CudaVersion{9, 2, 0}.code(&why));
  CHECK(why == "CUDA 9.2: expected major 10..99 and minor 0..99");
  CHECK_THROWS_AS((CudaVersion{9, 2, 0}.tag()), std::logic_error);
}

TEST_CASE("suggestions only for plausible typos") {
  std::vector<std::string> keys{"version", "kernels", "abi", "naming", "archs"};
  CHECK(closest("verison", keys) == "version");
  CHECK(closest("arch", keys) == "archs");
  CHECK_FALSE(closest("platform_tag", keys));
  CHECK(closest("2.8", {"2.7.1", "2.8.0"}) == "2.8.0");
  CHECK_FALSE(closest("13.0", {"12.6", "12.8"}));
  CHECK(closest("abi4", {"abi3", "per-interpreter"}) == "abi3");
  CHECK(did_you_mean("xyzzy", keys).empty());
  CHECK(join({"a", "b"}) == "a, b");
}

// The adapter onto wheel/build_tag.h and wheel/filename.h, on that header's
// own examples.
TEST_CASE("build tags and local versions come from wheel/build_tag.h") {
  CHECK(build_tag(TorchVersion{2, 8, 0, true}, {12, 9}) == "280.129");
  CHECK(build_tag(TorchVersion{2, 10, 0, true}, {13, 0}) == "21000.130");
  CHECK(build_tag(TorchVersion{2, 11, 1, true}, {12, 8}) == "21101.128");
  CHECK(build_tag(TorchVersion{2, 6, 0, true}, {12, 4}) == "260.124");
  std::string why;
  CHECK_FALSE(build_tag(TorchVersion{2, 9, 10, true}, {12, 8}, &why));
  CHECK_FALSE(why.empty());
  CHECK(local_version({12, 8}, TorchVersion{2, 9, 0, true}) == "cu128torch2.9.0");
  CHECK(wheel_filename("sageattn3", "1.0.0+cu128torch2.9.0", "", "cp312", "cp312", "linux_x86_64") ==
        "sageattn3-1.0.0+cu128torch2.9.0-cp312-cp312-linux_x86_64.whl");
  CHECK(wheel_filename("sage-attn.x", "1.0", "280.129", "cp39", "abi3", "win_amd64") ==
        "sage_attn_x-1.0-280.129-cp39-abi3-win_amd64.whl");
}

TEST_CASE("the matrix file is found from any directory below the checkout") {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / "sb_matrix_locate";
  fs::remove_all(root);
  fs::create_directories(root / "matrix");
  fs::create_directories(root / "a" / "b");
  sb::matrix::testing::write_temp("unused.yaml", "");
  std::ofstream(root / "matrix" / "build-matrix.yaml") << "pythons: []\n";
  auto expected = fs::absolute(root / "matrix" / "build-matrix.yaml");
  CHECK(find_matrix_file(root) == expected);
  CHECK(find_matrix_file(root / "a" / "b") == expected);
  fs::remove(expected);
  CHECK_FALSE(find_matrix_file(root / "a" / "b"));
  fs::remove_all(root);
}
