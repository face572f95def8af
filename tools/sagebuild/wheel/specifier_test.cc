// PEP 440 specifiers: the spec's examples for each operator, pre-release
// handling and the restrictions on wildcards and local labels.
#include <catch2/catch.hpp>

#include "sagebuild/wheel/pep440.h"

using namespace sb::wheel;

namespace {

Version v(std::string_view text) {
  auto parsed = parse_version(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

bool contains(std::string_view set, std::string_view version, bool pre = false) {
  std::string why;
  auto s = parse_specifier_set(set, &why);
  INFO("'" << set << "': " << why);
  REQUIRE(s.has_value());
  return s->contains(v(version), pre);
}

}  // namespace

TEST_CASE("specifier: == pads, ignores the candidate's local label, and matches prefixes") {
  // The examples of "Version matching".
  CHECK(contains("==1.1", "1.1"));
  CHECK(contains("==1.1.0", "1.1"));
  CHECK_FALSE(contains("==1.1.dev1", "1.1"));
  CHECK_FALSE(contains("==1.1a1", "1.1"));
  CHECK_FALSE(contains("==1.1.post1", "1.1"));
  CHECK(contains("==1.1.*", "1.1"));
  CHECK_FALSE(contains("==1.1", "1.1.post1"));
  CHECK(contains("==1.1.post1", "1.1.post1"));
  CHECK(contains("==1.1.*", "1.1.post1"));
  CHECK_FALSE(contains("==1.1", "1.1a1", true));
  CHECK(contains("==1.1a1", "1.1a1"));
  CHECK_FALSE(contains("==1.1.*", "1.1a1"));  // pre-release not requested
  CHECK(contains("==1.1.*", "1.1a1", true));
  CHECK(contains("==2.8.0", "2.8.0+cu128"));
  CHECK_FALSE(contains("==2.8.0+cu126", "2.8.0+cu128"));
  CHECK(contains("==2.8.0+cu128", "2.8.0+cu128"));
  CHECK(contains("==2.8.*", "2.8.1"));
  CHECK_FALSE(contains("==2.8.*", "2.9.0"));
  CHECK_FALSE(contains("==2.8.*", "2.80"));
  CHECK(contains("==2.*", "2"));
  CHECK(contains("==1.1.post1.*", "1.1.post1.dev2", true));
  CHECK_FALSE(contains("==1.1.post1.*", "1.1.post2"));
  CHECK_FALSE(contains("==1!1.*", "1.1"));
}

TEST_CASE("specifier: != is the negation of ==") {
  CHECK(contains("!=1.1", "1.2"));
  CHECK_FALSE(contains("!=1.1.0", "1.1"));
  CHECK_FALSE(contains("!=2.8.*", "2.8.3"));
  CHECK(contains("!=2.8.*", "2.9"));
}

TEST_CASE("specifier: ~= is >= V plus a prefix match without the last component") {
  CHECK(contains("~=2.2", "2.3"));
  CHECK(contains("~=2.2", "2.2"));
  CHECK_FALSE(contains("~=2.2", "3.0"));
  CHECK(contains("~=1.4.5", "1.4.9"));
  CHECK_FALSE(contains("~=1.4.5", "1.5.0"));
  CHECK_FALSE(contains("~=1.4.5", "1.4.4"));
  // The suffix is ignored for the prefix: ~=2.2.post3 is >=2.2.post3, ==2.*.
  CHECK(contains("~=2.2.post3", "2.9"));
  CHECK_FALSE(contains("~=2.2.post3", "2.2"));
  CHECK(contains("~=1.4.5a4", "1.4.6"));
  CHECK(contains("~=1.4.5a4", "1.4.5a5"));  // a pre-release clause admits pre-releases
  CHECK_FALSE(contains("~=1.4.5a4", "1.5"));
}

TEST_CASE("specifier: exclusive comparisons keep pre, post and local variants of V out") {
  CHECK(contains(">1.7", "1.7.1"));
  CHECK_FALSE(contains(">1.7", "1.7.post2"));
  CHECK(contains(">1.7.post2", "1.7.post3"));
  CHECK_FALSE(contains(">1.7", "1.7+local"));
  CHECK(contains(">1.7", "1.8+local"));
  CHECK(contains("<2.0", "1.9"));
  CHECK_FALSE(contains("<2.0", "2.0rc1", true));
  CHECK_FALSE(contains("<2.0", "2.0.dev1", true));
  CHECK(contains("<2.0rc1", "2.0b1"));
  CHECK(contains("<2.0", "1.9a1", true));
  CHECK_FALSE(contains("<2.0", "1.9a1"));
}

TEST_CASE("specifier: inclusive comparisons ignore the candidate's local label") {
  CHECK(contains("<=2.8.0", "2.8.0+cu128"));
  CHECK(contains(">=2.8.0", "2.8.0+cu128"));
  CHECK(contains(">=3.9", "3.12"));
  CHECK_FALSE(contains(">=3.9", "3.8.10"));
  CHECK(contains(">=3.9, <3.14", "3.13.1"));
  CHECK_FALSE(contains(">=3.9,<3.14", "3.14.0"));
}

TEST_CASE("specifier: pre-releases only when asked for or named by a clause") {
  CHECK_FALSE(contains("", "2.0a1"));
  CHECK(contains("", "2.0a1", true));
  CHECK(contains("", "2.0"));
  CHECK_FALSE(contains(">=1.0", "2.0a1"));
  CHECK(contains(">=1.0a1", "2.0a1"));
  CHECK(contains(">=2.9.0.dev0", "2.10.0.dev20250901"));
  CHECK_FALSE(contains("!=1.0a1", "2.0a1"));  // != does not name a pre-release to accept
}

TEST_CASE("specifier: === compares strings case-insensitively") {
  CHECK(contains("===1.0", "1.0"));
  CHECK_FALSE(contains("===1.0", "1.0.0"));
  CHECK(contains("===1.0+CU128", "1.0+cu128"));
}

TEST_CASE("specifier: invalid clauses say what was expected") {
  for (const char* bad :
       {"1.0", "=1.0", "=>1.0", ">=1.0.*", "~=1", "~=1.0.*", "==1.0.dev1.*", "==1.0+local.*", ">=1.0+local",
        "<1.0+local", "==1.x", "== 1.0 .1", ">=1.0,,<2", ">=1.0,", "===", "=== a b", "~=2.2+local"}) {
    std::string why;
    INFO("'" << bad << "'");
    CHECK_FALSE(parse_specifier_set(bad, &why).has_value());
    CHECK(why.find("expected") != std::string::npos);
  }
}

TEST_CASE("specifier: str() is normalized and round-trips") {
  auto s = parse_specifier_set(" >= 3.9 ,<3.14, != 3.10.* ,~=2.2.POST3, ===foo");
  REQUIRE(s);
  CHECK(s->str() == ">=3.9,<3.14,!=3.10.*,~=2.2.post3,===foo");
  auto again = parse_specifier_set(s->str());
  REQUIRE(again);
  CHECK(again->str() == s->str());
  CHECK(s->specifiers().size() == 5);
  CHECK(s->specifiers()[2].wildcard);
  CHECK(s->specifiers()[2].op == Operator::NotEqual);
}
