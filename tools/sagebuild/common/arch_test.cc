#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sagebuild/common/arch.h"

using sb::Arch;
using sb::parse_arch;

TEST_CASE("archs parse as compute capabilities, with an 'a' for an arch-specific target") {
  auto a = parse_arch("9.0a");
  REQUIRE(a);
  CHECK(*a == Arch{90, true});
  CHECK(*parse_arch("12.0") == Arch{120, false});
  CHECK(*parse_arch("8.9") == Arch{89, false});
  for (const char* bad : {"",   "9",    "90",  "sm_90", "sm_90a", "compute_90", "9.",   "9.a",  "9.10", "9.0b", "9.0f",
                          ".0", "09.0", "0.5", "123.0", "9.0aa",  "a",          "-8.0", "8.-1", " 8.0", "8.0 "})
    CHECK_FALSE(parse_arch(bad));
}

TEST_CASE("an arch's written forms: the capability, the name, nvcc's sm_ and compute_") {
  Arch a = *parse_arch("9.0a");
  CHECK(a.name() == "9.0a");
  CHECK(a.capability() == "9.0");
  CHECK(a.code() == "90a");
  CHECK(a.sass() == "sm_90a");
  CHECK(a.ptx() == "compute_90a");
  Arch b = *parse_arch("12.0");
  CHECK(b.name() == "12.0");
  CHECK(b.capability() == "12.0");
  CHECK(b.sass() == "sm_120");
  CHECK(b.ptx() == "compute_120");
  for (const char* text : {"8.0", "8.6", "8.9", "9.0", "9.0a", "10.0a", "12.0", "12.1a"})
    CHECK(parse_arch(text)->name() == text);  // the name reads back as written
}

TEST_CASE("archs order by capability, the portable one before its 'a' target") {
  CHECK(*parse_arch("9.0") < *parse_arch("9.0a"));
  CHECK(*parse_arch("9.0a") < *parse_arch("10.0"));
  CHECK(*parse_arch("8.9") < *parse_arch("12.0"));
  CHECK(sb::arch_at_least(*parse_arch("9.0a"), *parse_arch("9.0")));
  CHECK_FALSE(sb::arch_at_least(*parse_arch("8.9"), *parse_arch("9.0")));
  CHECK(sb::same_base_arch(*parse_arch("9.0"), *parse_arch("9.0a")));
}

TEST_CASE("PTX goes to the newest arch that is not arch-specific") {
  std::vector<Arch> archs{*parse_arch("8.0"), *parse_arch("9.0a"), *parse_arch("12.0")};
  CHECK(sb::ptx_arch(archs)->name() == "12.0");
  archs.pop_back();
  CHECK(sb::ptx_arch(archs)->name() == "8.0");
  CHECK_FALSE(sb::ptx_arch({*parse_arch("10.0a"), *parse_arch("12.0a")}));
}

TEST_CASE("a malformed arch is refused naming the argument or the file's place, and how to write one") {
  try {
    sb::parse_arch_arg("sm_90a", "--archs");
    FAIL("no error");
  } catch (const sb::UsageError& e) {
    CHECK(std::string(e.what()) ==
          "--archs: 'sm_90a' is not a CUDA arch; expected <major>.<minor>[a]: the compute capability (\"8.6\"), "
          "with an 'a' for an arch-specific target (\"9.0a\")");
  }
  try {
    sb::parse_arch_at("9", sb::SourceLocation{"m.yaml", 3, 12});
    FAIL("no error");
  } catch (const sb::ConfigError& e) {
    CHECK(e.where().str() == "m.yaml:3:12");
    CHECK(e.bare_message().find("'9' is not a CUDA arch; expected <major>.<minor>[a]") == 0);
  }
  CHECK(sb::parse_arch_arg("10.0a", "--archs") == Arch{100, true});
}
