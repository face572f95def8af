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
  // As pip reads it: the malformed line ends the fields, the rest is the body.
  CHECK(h.first("Version") == nullptr);
  CHECK(h.body == "this is not a field\n  \xff\nVersion: 1\n");
  CHECK_THAT(h.problems[0].message, Catch::Contains("ends the fields"));

  auto leading = parse_email_header("  continued\nName: x\n");
  REQUIRE(leading.problems.size() == 1);
  CHECK(leading.problems[0].line == 1);
}

TEST_CASE("email header: read as Python's email parser reads it") {
  // A bare CR ends a line: the Requires-Dist that hid in Name's value is a field.
  auto cr = parse_email_header("Name: demo\rRequires-Dist: torch\r\nVersion: 1\n");
  REQUIRE(cr.fields.size() == 3);
  CHECK(cr.first("Name")->value == "demo");
  CHECK(cr.first("Requires-Dist")->value == "torch");
  CHECK(cr.first("Requires-Dist")->line == 2);
  // Other characters str.splitlines() breaks at do not break a header line.
  auto vt = parse_email_header("Name: demo\vVersion: 1\x1c\n");
  REQUIRE(vt.fields.size() == 1);
  CHECK(vt.first("Name")->value == "demo\vVersion: 1\x1c");
  // A line of blanks continues the field; only an empty line ends the fields.
  auto blank = parse_email_header("Name: demo\n   \nVersion: 1\n\nbody\n");
  CHECK(blank.first("Name")->value == "demo");
  CHECK(blank.first("Version")->value == "1");
  CHECK(blank.body == "body\n");
  // A field without a name is skipped, and a continuation after it dropped.
  auto nameless = parse_email_header(":orphan\n  more\nName: demo\n");
  REQUIRE(nameless.fields.size() == 1);
  CHECK(nameless.first("Name")->value == "demo");
  CHECK(nameless.problems.size() == 2);
  // "Name : x" (a space in the name) ends the fields.
  auto spaced = parse_email_header("Name: demo\nVersion : 1\nRequires-Dist: torch\n");
  CHECK(spaced.fields.size() == 1);
  CHECK(spaced.body == "Version : 1\nRequires-Dist: torch\n");
  // A mbox "From " line: skipped, or, as the last line of the fields, the body's first.
  auto from = parse_email_header("Name: demo\nFrom x\nVersion: 1\n");
  CHECK(from.count("Version") == 1);
  auto last = parse_email_header("Name: demo\nFrom x\n\nbody\n");
  CHECK(last.body == "From x\nbody\n");
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
