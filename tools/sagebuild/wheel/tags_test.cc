// PEP 425 tags: vectors/tags.tsv (packaging's tag tests), expansion and its
// cap, platform families (CHECKLIST F8), ABI coherence (F9), build tags.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sagebuild/wheel/corpus_test_util.h"
#include "sagebuild/wheel/tags.h"

using namespace sb::wheel;

namespace {

bool has(const sb::Findings& fs, std::string_view rule, sb::Severity sev) {
  return std::any_of(fs.begin(), fs.end(),
                     [&](const sb::Finding& f) { return f.rule == rule && f.severity == sev; });
}

TagSets sets(std::string_view triple) {
  auto s = split_tag_triple(triple);
  REQUIRE(s.has_value());
  return *s;
}

}  // namespace

TEST_CASE("tags: vectors/tags.tsv verdicts") {
  auto rows = testing::read_tsv(testing::corpus_dir() / "vectors" / "tags.tsv");
  CHECK(rows.size() == 16);
  for (const auto& row : rows) {
    const std::string& tag = row.at("tag");
    bool valid = row.at("upstream_verdict") == "valid";
    // packaging agrees with its own tests on every row.
    REQUIRE((row.at("packaging_HEAD").rfind("valid", 0) == 0) == valid);
    std::string why;
    auto tags = parse_tags(tag, kMaxExpandedTags, &why);
    INFO(tag << " (" << row.at("reason") << "): " << why);
    CHECK(tags.has_value() == valid);
    if (!valid) CHECK(why.find("expected") != std::string::npos);
  }
}

TEST_CASE("tags: expansion order, lowercasing and the cap") {
  auto tags = parse_tags("py2.py3-none-any");
  REQUIRE(tags);
  REQUIRE(tags->size() == 2);
  CHECK((*tags)[0].str() == "py2-none-any");
  CHECK((*tags)[1].str() == "py3-none-any");

  tags = parse_tags("cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64");
  REQUIRE(tags);
  CHECK(tags->size() == 2);
  CHECK((*tags)[1] == Tag{"cp312", "cp312", "manylinux_2_17_x86_64"});

  tags = parse_tags("CP312-CP312-LINUX_X86_64");
  REQUIRE(tags);
  CHECK((*tags)[0].str() == "cp312-cp312-linux_x86_64");

  // 20 x 20 x 20 = 8000 tags: over the default cap, under an explicit one.
  std::string members;
  for (int i = 0; i < 20; ++i) members += (i ? ".p" : "p") + std::to_string(i);
  std::string big = members + "-" + members + "-" + members;
  std::string why;
  CHECK_FALSE(parse_tags(big, kMaxExpandedTags, &why));
  CHECK(why.find("more than 4096") != std::string::npos);
  auto expanded = parse_tags(big, 8000);
  REQUIRE(expanded);
  CHECK(expanded->size() == 8000);
}

TEST_CASE("tags: F6 warnings for case and order, errors for empty members") {
  CHECK(has(check_tag_sets(sets("py3.py2-none-any")), "F6", sb::Severity::Warning));
  CHECK(has(check_tag_sets(sets("cp312-cp312-manylinux_2_28_x86_64.manylinux_2_17_x86_64")), "F6",
            sb::Severity::Warning));
  CHECK(check_tag_sets(sets("cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64")).empty());
  CHECK(has(check_tag_sets(sets("cp312-cp312-LINUX_X86_64")), "F6", sb::Severity::Warning));
  CHECK_FALSE(has(check_tag_sets(sets("cp312-cp312-LINUX_X86_64")), "F6", sb::Severity::Error));
  CHECK(has(check_tag_sets(sets("py3-none.-any")), "F6", sb::Severity::Error));
  CHECK(has(check_tag_sets(sets("py2.7-none-any")), "F6", sb::Severity::Error));
  CHECK(check_tag_sets(sets("py2.py3-none-any")).empty());
}

TEST_CASE("tags: platform families") {
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
  for (const char* bad : {"macosx_9_2_x86_64", "macosx_11_2_arm64", "macosx_16_2_arm64",
                          "macosx_27_0_arm64", "macosx_10_15_amd64", "manylinux_2_x86_64",
                          "manylinux_2_17_", "musllinux_1_x86_64", "android_x_arm64_v8a",
                          "android_27_mips", "ios_15_arm64_iphoneos", "ios_15_6_arm64_ipad",
                          "pyemscripten_2026_0_wasm64", "manylinux1_"}) {
    INFO(bad);
    auto info = classify_platform(bad);
    CHECK_FALSE(info.problem.empty());
    CHECK(info.strict_problem);
    CHECK(has(check_platforms({bad}), "F8", sb::Severity::Strict));
  }
}

TEST_CASE("tags: F8 findings on platform sets") {
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

TEST_CASE("tags: F9 ABI coherence") {
  CHECK(check_abi_coherence(sets("cp39-abi3-manylinux_2_28_x86_64")).empty());
  CHECK(check_abi_coherence(sets("cp34.cp35.cp36-abi3-any")).empty());
  CHECK(check_abi_coherence(sets("cp312-cp312-any")).empty());
  CHECK(check_abi_coherence(sets("cp27-cp27mu-any")).empty());
  CHECK(check_abi_coherence(sets("cp313-cp313t-any")).empty());
  CHECK(check_abi_coherence(sets("pp310-pypy310_pp73-any")).empty());
  CHECK(check_abi_coherence(sets("py3-none-any")).empty());
  CHECK(has(check_abi_coherence(sets("py3-abi3-any")), "F9", sb::Severity::Warning));
  CHECK(has(check_abi_coherence(sets("cp313t-abi3-any")), "F9", sb::Severity::Warning));
  CHECK(has(check_abi_coherence(sets("cp312-cp311-any")), "F9", sb::Severity::Warning));
  CHECK(has(check_abi_coherence(sets("py3-cp312-any")), "F9", sb::Severity::Warning));
  // cp313t is the ABI, not the interpreter: pip would never select this wheel.
  CHECK(has(check_abi_coherence(sets("cp313t-cp313t-any")), "F9", sb::Severity::Warning));
}

TEST_CASE("tags: interpreter and ABI of a build without running Python") {
  auto t = cpython_tags("3.12", AbiMode::PerVersion);
  REQUIRE(t);
  CHECK(t->interpreter + "-" + t->abi == "cp312-cp312");
  t = cpython_tags("3.12", AbiMode::Stable);
  REQUIRE(t);
  CHECK(t->interpreter + "-" + t->abi == "cp39-abi3");
  t = cpython_tags("3.13", AbiMode::FreeThreaded);
  REQUIRE(t);
  CHECK(t->interpreter + "-" + t->abi == "cp313-cp313t");
  t = cpython_tags("3.10", AbiMode::Stable, "3.10");
  REQUIRE(t);
  CHECK(t->interpreter == "cp310");
  std::string why;
  CHECK_FALSE(cpython_tags("3.8", AbiMode::Stable, "3.9", &why));
  CHECK_FALSE(cpython_tags("3.12", AbiMode::FreeThreaded, "3.9", &why));
  CHECK(why.find("3.13") != std::string::npos);
  for (const char* bad : {"3", "3.", "312", "3.12.1", "three.twelve", ""})
    CHECK_FALSE(cpython_tags(bad, AbiMode::PerVersion, "3.9", &why));
}
