#include <catch2/catch.hpp>

#include <iostream>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/common/shared_dir_test.h"
#include "sagebuild/index/test_wheels.h"
#include "sagebuild/index/wheel_scan.h"

using namespace sb::index;
namespace fs = std::filesystem;

TEST_CASE("torch and CUDA from the file name: build tag, then local version") {
  auto name = [](const char* f) { return *sb::wheel::parse_wheel_filename(f).filename; };
  auto a = torch_cuda_from_filename(name("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl"));
  REQUIRE(a);
  CHECK(a->torch == "2.8.0");
  CHECK(a->cuda == "12.9");
  auto b = torch_cuda_from_filename(name("sageattention-2.2.0-21100.130-cp39-abi3-win_amd64.whl"));
  REQUIRE(b);
  CHECK(b->torch == "2.11.0");
  CHECK(b->cuda == "13.0");
  auto c = torch_cuda_from_filename(name("sageattn3-1.0.0+cu128torch2.9.0-cp312-cp312-linux_x86_64.whl"));
  REQUIRE(c);
  CHECK(c->torch == "2.9.0");
  CHECK(c->cuda == "12.8");
  CHECK_FALSE(torch_cuda_from_filename(name("sageattention-2.2.0-cp39-abi3-linux_x86_64.whl")));
}

TEST_CASE("scan_wheel prefers build_info.json and reads Requires-Python") {
  fs::path dir = testing::fresh_dir("scan");
  // The build tag says torch 2.8 / CUDA 12.9; build_info says 2.9.0 / 12.8.
  // build_info wins: it is what verify checks against the binaries.
  fs::path p = testing::write_wheel(dir, "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                                    testing::build_info_json("2.9.0", "12.8"), ">=3.9, <3.14");
  IndexedWheel w = scan_wheel(p);
  CHECK(w.project == "sageattention");
  CHECK(w.version == "2.2.0");
  CHECK(w.variant == "torch2.9-cu128");
  CHECK(w.requires_python == ">=3.9, <3.14");
  CHECK(w.sha256 == sb::hex(sb::sha256_file(p)));
  CHECK(w.size == fs::file_size(p));
  CHECK(w.build_info["torch"]["version"] == "2.9.0");

  fs::path q = testing::write_wheel(dir, "sageattention-2.2.0-280.129-cp39-abi3-win_amd64.whl", std::nullopt, "");
  IndexedWheel v = scan_wheel(q);
  CHECK(v.variant == "torch2.8-cu129");
  CHECK(v.requires_python.empty());
  CHECK(v.build_info.is_null());
}

TEST_CASE("scan_wheel says what it expected") {
  fs::path dir = testing::fresh_dir("scan_errors");
  fs::path plain = testing::write_wheel(dir, "sageattention-2.2.0-cp39-abi3-linux_x86_64.whl", std::nullopt);
  CHECK_THROWS_WITH(scan_wheel(plain), Catch::Contains("cannot tell which torch and CUDA"));
  fs::path bad_info = testing::write_wheel(dir, "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                                           std::string("{\"schema\":1}"));
  CHECK_THROWS_WITH(scan_wheel(bad_info), Catch::Contains("invalid build_info.json"));
  fs::path bad_name = dir / "not-a-wheel.whl";
  fs::copy_file(plain, bad_name);
  CHECK_THROWS_WITH(scan_wheel(bad_name), Catch::Contains("not a valid wheel file name"));
  fs::path not_zip = dir / "sageattention-2.2.0-280.129-cp39-abi3-win_amd64.whl";
  sb::write_file_atomic(not_zip, "this is not a zip archive");
  CHECK_THROWS_WITH(scan_wheel(not_zip), Catch::Contains("not a readable zip archive"));
}

TEST_CASE("scan_directory: recursive, de-duplicated, conflicts refused") {
  fs::path dir = testing::fresh_dir("scan_dir");
  std::string name = "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl";
  testing::write_wheel(dir / "job-a", name, std::nullopt);
  fs::create_directories(dir / "job-b");
  fs::copy_file(dir / "job-a" / name, dir / "job-b" / name);  // the same file twice
  testing::write_wheel(dir / "job-c", "sageattention-2.2.0-290.130-cp39-abi3-linux_x86_64.whl", std::nullopt);
  auto wheels = scan_directory(dir);
  REQUIRE(wheels.size() == 2);
  CHECK(wheels[0].filename == name);

  testing::write_wheel(dir / "job-d", name, std::nullopt, ">=3.11");  // same name, other bytes
  CHECK_THROWS_WITH(scan_directory(dir), Catch::Contains("two different wheels named " + name));
  CHECK_THROWS_WITH(scan_directory(testing::fresh_dir("empty")), Catch::Contains("no *.whl files"));
  CHECK_THROWS_WITH(scan_directory(dir / "missing"), Catch::Contains("is not a directory"));
}

TEST_CASE("scan_wheel refuses hostile contents by name, in bounded memory") {
  fs::path dir = testing::fresh_dir("scan_hostile");
  // Not a specifier set, and not UTF-8: it would go into every page and the JSON API.
  fs::path bad_rp = testing::write_wheel(dir / "a", "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                                         std::nullopt, ">=3.9\xff\xfe");
  CHECK_THROWS_WITH(scan_wheel(bad_rp), Catch::Contains("Requires-Python '>=3.9\xff\xfe' is not a specifier set"));
  // build_info.json of 8 MiB of '[' (a few KiB deflated): refused before it is read, let alone parsed.
  fs::path deep = testing::write_wheel(dir / "b", "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                                       std::string(8 << 20, '['));
  CHECK_THROWS_WITH(scan_wheel(deep), Catch::Contains("cannot read sageattention/build_info.json"));
  // Nested 100,000 levels in 200 KB (a stack overflow in nlohmann's copy once): refused by its depth.
  fs::path nested = testing::write_wheel(dir / "c", "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                                         std::string(100000, '[') + std::string(100000, ']'));
  CHECK_THROWS_WITH(scan_wheel(nested), Catch::Contains("invalid build_info.json: build_info: nested deeper than 32"));
}

// POSIX file names are bytes; Windows' are UTF-16, where such a name cannot be made.
TEST_CASE("scan_directory: a file name that is not UTF-8 is a clear error", "[posix]") {
  fs::path dir = testing::fresh_dir("scan_utf8");
  testing::write_wheel(dir, "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64\xff.whl", std::nullopt);
  CHECK_THROWS_WITH(scan_directory(dir), Catch::Contains("\\xff.whl: the file name is not UTF-8"));
}

TEST_CASE("scan_wheel: the shared deep build_info.json wheel is refused, not a crash (skipped without it)") {
  fs::path dir = fs::path(SAGEBUILD_FUZZ_FINDINGS_DIR) / "index-deep-build-info-crash";
  SB_SKIP_WITHOUT_SHARED_DIR(dir);
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".whl") {
      CHECK_THROWS_WITH(scan_wheel(e.path()), Catch::Contains("nested deeper than"));
      ++n;
    }
  CHECK(n == 1);
}

TEST_CASE("files that pip and PyPI take for one are refused together") {
  CHECK(wheel_file_key("SageAttention-2.2-280.129-cp39-abi3-linux_x86_64.whl") ==
        wheel_file_key("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl"));
  CHECK(wheel_file_key("sage_attention-2.2.0-cp39-abi3-linux_x86_64.whl") ==
        wheel_file_key("sage.attention-2.2.0-cp39-abi3-linux_x86_64.whl"));
  CHECK(wheel_file_key("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl") !=
        wheel_file_key("sageattention-2.2.0-280.128-cp39-abi3-linux_x86_64.whl"));
  fs::path root = testing::fresh_dir("case-collision");
  testing::write_wheel(root / "a", "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                       testing::build_info_json("2.8.0", "12.9"));
  testing::write_wheel(root / "b", "SageAttention-2.2-280.129-cp39-abi3-linux_x86_64.whl",
                       testing::build_info_json("2.8.0", "12.9"));
  CHECK_THROWS_WITH(check_distinct_files(scan_directory(root)), Catch::Contains("one file to pip and PyPI"));
}

TEST_CASE("a wheel directory nested deeper than the bound is refused, in little memory") {
  fs::path root = testing::fresh_dir("deep");
  fs::path p = root;
  for (int i = 0; i < kMaxDepth + 2; ++i) p /= "d";
  fs::create_directories(p);
  testing::write_wheel(root, "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                       testing::build_info_json("2.8.0", "12.9"));
  CHECK_THROWS_WITH(scan_directory(root), Catch::Contains("nested more than 32 deep"));
}
