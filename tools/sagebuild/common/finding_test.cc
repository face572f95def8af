// Findings are bounded: per rule, in all, and in length; what is dropped is
// counted by rule and by severity.
#include <catch2/catch.hpp>

#include "sagebuild/common/finding.h"

using namespace sb;

TEST_CASE("a list keeps at most kMaxPerRule findings of one rule and counts the rest") {
  Findings f;
  for (int i = 0; i < 5'000'000; ++i) add(f, "E1", Severity::Strict, "m", "line " + std::to_string(i));
  add(f, "E3", Severity::Error, "m", "another rule still gets in");
  CHECK(f.size() == Findings::kMaxPerRule + 1);
  CHECK(f.dropped() == 5'000'000 - Findings::kMaxPerRule);
  CHECK(f.dropped(Severity::Strict) == f.dropped());
  CHECK(f.dropped_by_rule().at("E1") == f.dropped());
  CHECK(f.back().rule == "E3");
}

TEST_CASE("a list keeps at most kMaxFindings in all; a dropped error is still an error") {
  Findings f;
  for (int r = 0; r < 100; ++r)
    for (int i = 0; i < 100; ++i) add(f, "X" + std::to_string(r), Severity::Warning, "", "w");
  CHECK(f.size() == Findings::kMaxFindings);
  add(f, "R5", Severity::Error, "", "late error");
  CHECK(f.dropped(Severity::Error) == 1);
  CHECK(f.dropped() == 100 * 100 - Findings::kMaxFindings + 1);
}

TEST_CASE("texts are clipped; skip() counts without building; merge() carries the counts") {
  Findings a;
  add(a, "R2", Severity::Error, std::string(10'000, 'm'), std::string(60'000'000, '\0'), "x");
  REQUIRE(a.size() == 1);
  CHECK(a[0].message.size() <= Findings::kMaxText + 40);
  CHECK(a[0].member.size() <= Findings::kMaxText + 40);
  for (std::size_t i = 1; i < Findings::kMaxPerRule; ++i) {
    REQUIRE_FALSE(a.skip("R2", Severity::Error));
    add(a, "R2", Severity::Error, "", "r");
  }
  CHECK(a.skip("R2", Severity::Error));
  CHECK(a.dropped(Severity::Error) == 1);
  Findings b;
  add(b, "R3", Severity::Error, "", "kept");
  b.merge(a);
  CHECK(b.size() == Findings::kMaxPerRule + 1);
  CHECK(b.dropped(Severity::Error) == 1);
  CHECK(b.dropped_by_rule().at("R2") == 1);
}
