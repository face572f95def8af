#include <catch2/catch.hpp>

#include <zip.h>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/toolchain/cache.h"
#include "sagebuild/toolchain/wheel_unpack.h"

using namespace sb::toolchain;
namespace fs = std::filesystem;

namespace {
fs::path fresh(const char* name) {
  fs::path d = fs::temp_directory_path() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("fill_once fills an entry once, even with concurrent builds") {
  fs::path root = fresh("sb-build-cache-test");
  fs::path entry = root / "torch" / "2.11.0-cu130-abc";
  fs::create_directories(entry.parent_path());
  std::atomic<int> fills{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      fill_once(entry, [&](const fs::path& tmp) {
        ++fills;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        sb::write_file_atomic(tmp / "version.py", "__version__ = '2.11.0'\n");
      });
    });
  for (auto& t : threads) t.join();
  CHECK(fills == 1);
  CHECK(fs::exists(entry / "version.py"));
  // Nothing temporary is left beside the entry.
  int n = 0;
  for (const auto& e : fs::directory_iterator(entry.parent_path()))
    if (e.path().filename().string().find(".tmp") != std::string::npos) ++n;
  CHECK(n == 0);
  fs::remove_all(root);
}

TEST_CASE("a fill that throws leaves no entry and no temporary") {
  fs::path root = fresh("sb-build-cache-throw");
  fs::path entry = root / "cuda" / "13.0";
  fs::create_directories(entry.parent_path());
  CHECK_THROWS_AS(fill_once(entry,
                            [](const fs::path& tmp) {
                              sb::write_file_atomic(tmp / "half", "x");
                              throw sb::IoError("download failed");
                            }),
                  sb::IoError);
  CHECK_FALSE(fs::exists(entry));
  for (const auto& e : fs::directory_iterator(entry.parent_path()))
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("unpack_wheel extracts the chosen prefixes, strips, keeps exec bits, refuses ..", "[posix]") {
  fs::path root = fresh("sb-build-unpack");
  fs::path whl = root / "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux_2_17_x86_64.whl";
  {
    int err = 0;
    zip_t* z = zip_open(reinterpret_cast<const char*>(whl.u8string().c_str()), ZIP_CREATE | ZIP_TRUNCATE, &err);
    REQUIRE(z);
    auto add = [&](const char* name, const char* text, unsigned mode) {
      zip_source_t* s = zip_source_buffer(z, text, std::strlen(text), 0);
      zip_int64_t i = zip_file_add(z, name, s, ZIP_FL_ENC_UTF_8);
      REQUIRE(i >= 0);
      zip_file_set_external_attributes(z, static_cast<zip_uint64_t>(i), 0, ZIP_OPSYS_UNIX, (0100000u | mode) << 16);
    };
    add("nvidia/cu13/bin/nvcc", "#!/bin/sh\n", 0755);
    add("nvidia/cu13/include/cuda.h", "// cuda\n", 0644);
    add("nvidia_cuda_nvcc-13.0.88.dist-info/METADATA", "Name: x\n", 0644);
    REQUIRE(zip_close(z) == 0);
  }
  CHECK(unpack_wheel(whl, root / "home", {{"nvidia/cu13/", "nvidia/cu13/"}}) == 2);
  CHECK(fs::exists(root / "home/include/cuda.h"));
  CHECK_FALSE(fs::exists(root / "home/nvidia_cuda_nvcc-13.0.88.dist-info"));
  auto perms = fs::status(root / "home/bin/nvcc").permissions();
  CHECK((perms & fs::perms::owner_exec) != fs::perms::none);
  CHECK((fs::status(root / "home/include/cuda.h").permissions() & fs::perms::owner_exec) == fs::perms::none);
  CHECK(read_wheel_member(whl, "nvidia/cu13/include/cuda.h") == "// cuda\n");
  CHECK_THROWS_AS(read_wheel_member(whl, "torch/version.py"), sb::IoError);
  CHECK_THROWS_AS(unpack_wheel(root / "missing.whl", root / "x", {}), sb::IoError);

  fs::path evil = root / "evil.whl";
  {
    int err = 0;
    zip_t* z = zip_open(reinterpret_cast<const char*>(evil.u8string().c_str()), ZIP_CREATE | ZIP_TRUNCATE, &err);
    zip_source_t* s = zip_source_buffer(z, "x", 1, 0);
    zip_file_add(z, "torch/../../escape.txt", s, 0);
    zip_close(z);
  }
  CHECK_THROWS_WITH(unpack_wheel(evil, root / "e", {{"torch/", ""}}), Catch::Contains("unsafe"));
  CHECK_FALSE(fs::exists(root / "escape.txt"));
  fs::remove_all(root);
}
