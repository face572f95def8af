// Platform tags (docs/verify-rules.md F8): classification of every family the spec and
// the vectors name, malformed members, and the findings on platform sets.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sagebuild/wheel/platform.h"

using namespace sb::wheel;

namespace {

bool has(const sb::Findings& fs, std::string_view rule, sb::Severity sev) {
  return std::any_of(fs.begin(), fs.end(), [&](const sb::Finding& f) { return f.rule == rule && f.severity == sev; });
}

}  // namespace

TEST_CASE("platform: families, versions and architectures") {
  struct Case {
    const char* tag;
    PlatformFamily family;
    unsigned major, minor;
    const char* arch;
    bool legacy;
  };
  const Case cases[] = {
      {"any", PlatformFamily::Any, 0, 0, "", false},
      {"win32", PlatformFamily::Windows, 0, 0, "x86", false},
      {"win_amd64", PlatformFamily::Windows, 0, 0, "amd64", false},
      {"win_arm64", PlatformFamily::Windows, 0, 0, "arm64", false},
      {"linux_x86_64", PlatformFamily::Linux, 0, 0, "x86_64", false},
      {"linux_armv7l", PlatformFamily::Linux, 0, 0, "armv7l", false},
      {"manylinux1_x86_64", PlatformFamily::Manylinux, 2, 5, "x86_64", true},
      {"manylinux2010_i686", PlatformFamily::Manylinux, 2, 12, "i686", true},
      {"manylinux2014_aarch64", PlatformFamily::Manylinux, 2, 17, "aarch64", true},
      {"manylinux_2_28_x86_64", PlatformFamily::Manylinux, 2, 28, "x86_64", false},
      {"manylinux_2_39_riscv64", PlatformFamily::Manylinux, 2, 39, "riscv64", false},
      {"musllinux_1_2_armv7l", PlatformFamily::Musllinux, 1, 2, "armv7l", false},
      {"macosx_10_9_x86_64", PlatformFamily::Macos, 10, 9, "x86_64", false},
      {"macosx_11_0_arm64", PlatformFamily::Macos, 11, 0, "arm64", false},
      {"macosx_10_12_universal2", PlatformFamily::Macos, 10, 12, "universal2", false},
      {"android_27_arm64_v8a", PlatformFamily::Android, 27, 0, "arm64_v8a", false},
      {"android_21_x86_64", PlatformFamily::Android, 21, 0, "x86_64", false},
      {"ios_15_6_arm64_iphonesimulator", PlatformFamily::Ios, 15, 6, "arm64", false},
      {"iOS_13_0_x86_64_iphonesimulator", PlatformFamily::Ios, 13, 0, "x86_64", false},
      {"pyemscripten_2026_0_wasm32", PlatformFamily::Emscripten, 2026, 0, "wasm32", false},
      {"fakeplat", PlatformFamily::Unknown, 0, 0, "", false},
  };
  for (const auto& c : cases) {
    INFO(c.tag);
    auto info = classify_platform(c.tag);
    CHECK(info.family == c.family);
    CHECK(info.major == c.major);
    CHECK(info.minor == c.minor);
    CHECK(info.arch == c.arch);
    CHECK(info.legacy_alias == c.legacy);
    CHECK(info.problem.empty());
  }
  for (const char* bad :
       {"macosx_9_2_x86_64", "macosx_11_2_arm64", "macosx_16_2_arm64", "macosx_27_0_arm64", "macosx_10_15_amd64",
        "manylinux_2_x86_64", "manylinux_2_17_", "musllinux_1_x86_64", "android_x_arm64_v8a", "android_27_mips",
        "ios_15_arm64_iphoneos", "ios_15_6_arm64_ipad", "pyemscripten_2026_0_wasm64", "manylinux1_", "manylinux",
        "manylinux2", "manylinuxx_2_28_x86_64"}) {
    INFO(bad);
    auto info = classify_platform(bad);
    CHECK_FALSE(info.problem.empty());
    CHECK(info.strict_problem);
    CHECK(has(check_platforms({bad}), "F8", sb::Severity::Strict));
  }
}

TEST_CASE("platform: F8 findings on platform sets") {
  CHECK(check_platforms({"manylinux_2_28_x86_64"}).empty());
  CHECK(check_platforms({"manylinux2014_x86_64", "manylinux_2_17_x86_64"}).empty());
  CHECK(check_platforms({"fakeplat"}).empty());  // unknown platforms are legal (pip's own tests use them)
  CHECK(check_platforms({"any", "any"}).empty());
  CHECK(has(check_platforms({"linux_x86_64"}), "F8", sb::Severity::Warning));
  CHECK(has(check_platforms({"linux_armv7l"}), "F8", sb::Severity::Warning));
  CHECK(has(check_platforms({"any", "linux_x86_64"}), "F8", sb::Severity::Warning));
  CHECK(check_platforms({"any", "win_amd64"}).size() == 1);
  CHECK(check_platforms({"manylinux1_x86_64", "musllinux_1_1_x86_64"}).size() == 1);
  CHECK(check_platforms({"manylinux_2_17_x86_64", "manylinux_2_17_aarch64"}).size() == 1);
  for (const auto& f : check_platforms({"any", "linux_x86_64", "linux_aarch64"}))
    CHECK(f.severity == sb::Severity::Warning);
}
