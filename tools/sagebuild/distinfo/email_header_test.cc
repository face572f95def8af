#include <catch2/catch.hpp>

#include "sagebuild/distinfo/email_header.h"

using namespace sb::distinfo;

TEST_CASE("email header: fields, repeats, continuation and body") {
  auto h = parse_email_header(
      "Metadata-Version: 2.4\r\nName: sageattention\nClassifier: A\nclassifier: B\n"
      "Description: first\n        second\n\nThe body\nline 2\n");
  CHECK(h.problems.empty());
  CHECK(h.utf8);
  REQUIRE(h.fields.size() == 5);
  CHECK(h.first("metadata-version")->value == "2.4");
  CHECK(h.values("CLASSIFIER") == std::vector<std::string>{"A", "B"});
  CHECK(h.first("Description")->value == "first\nsecond");
  CHECK(h.first("Description")->line == 5);
  CHECK(h.body == "The body\nline 2\n");
  CHECK(h.count("Name") == 1);
  CHECK(h.first("Missing") == nullptr);
}

TEST_CASE("email header: malformed lines and bad UTF-8 carry line numbers") {
  auto h = parse_email_header("Name: x\nthis is not a field\n  \xff\nVersion: 1\n");
  // line 3 is a (whitespace-led) continuation, but its bytes are not UTF-8
  REQUIRE(h.problems.size() == 2);
  CHECK(h.problems[0].line == 2);
  CHECK(h.problems[1].line == 3);
  CHECK_FALSE(h.utf8);
  CHECK(h.first("Version")->value == "1");

  auto leading = parse_email_header("  continued\nName: x\n");
  REQUIRE(leading.problems.size() == 1);
  CHECK(leading.problems[0].line == 1);
}

TEST_CASE("email header: UTF-8 validation rejects overlongs, surrogates and truncation") {
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("\xe9\x80\xb2\xe5\x85\xa5"));  // 進入
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));            // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));        // surrogate U+D800
  CHECK_FALSE(is_valid_utf8("\xe9\x80"));            // truncated
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));    // > U+10FFFF
}

TEST_CASE("email header: the writer folds multi-line values and round-trips") {
  std::string text = write_email_header({{"Name", "x"}, {"Summary", "a\nb"}}, "body");
  CHECK(text == "Name: x\nSummary: a\n        b\n\nbody\n");
  auto h = parse_email_header(text);
  CHECK(h.first("Summary")->value == "a\nb");
  CHECK(h.body == "body\n");
}
