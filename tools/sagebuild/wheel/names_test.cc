// Name normalization examples of reference/spec-name-normalization.rst and
// the core-metadata Name rule.
#include <catch2/catch.hpp>

#include "sagebuild/wheel/names.h"

using namespace sb::wheel;

TEST_CASE("names: the spec's equivalent spellings share one canonical form") {
  for (const char* n : {"friendly-bard", "Friendly-Bard", "FRIENDLY-BARD", "friendly.bard", "friendly_bard",
                        "friendly--bard", "FrIeNdLy-._.-bArD"}) {
    INFO(n);
    CHECK(canonicalize_name(n) == "friendly-bard");
    CHECK(wheel_escape_name(n) == "friendly_bard");
    CHECK(same_project(n, "friendly-bard"));
  }
  CHECK_FALSE(same_project("friendlybard", "friendly-bard"));
  CHECK(canonicalize_name("SageAttention") == "sageattention");
  CHECK(wheel_escape_name("sage-attention") == "sage_attention");
  CHECK(wheel_escape_name("has.script") == "has_script");
}

TEST_CASE("names: core-metadata Name validity") {
  for (const char* ok : {"a", "A", "0", "torch", "sage-attention", "Sage_Attention.2", "a.b-c_d"})
    CHECK(is_valid_project_name(ok));
  for (const char* bad :
       {"", "-a", "a-", "_a", "a_", ".a", "a.", "qcodes_", "foo#bar", "foo bar", "foo\n", "b\xc3\xa1r", "a/b"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(is_valid_project_name(bad));
  }
}

TEST_CASE("names: character classes used by the file-name checks") {
  CHECK(is_ascii_name_char('a'));
  CHECK(is_ascii_name_char('Z'));
  CHECK(is_ascii_name_char('9'));
  CHECK(is_ascii_name_char('.'));
  CHECK(is_ascii_name_char('_'));
  CHECK_FALSE(is_ascii_name_char('-'));
  CHECK_FALSE(is_ascii_name_char('#'));
  CHECK_FALSE(is_ascii_name_char('\xc3'));
  CHECK(ascii_lower("SageATTN-\xc3\x81") == "sageattn-\xc3\x81");
}
