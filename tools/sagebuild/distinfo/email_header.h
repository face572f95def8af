// The "email header" text format of METADATA and WHEEL (core metadata spec,
// "a format based on RFC 822"): `Name: value` lines, continuation lines that
// start with whitespace, and an optional body after the first empty line,
// read as Python's email parser (compat32) reads it, which is what pip and
// packaging see: lines end at LF, CRLF or a bare CR; a line of blanks
// continues the field before it; the first line that is neither a field nor a
// continuation ends the fields and starts the body.  tests/verify/
// test_metadata_reading.py compares the two on generated texts.
//
// The parser never throws: problems (non-UTF-8 bytes, lines that are neither
// a field nor a continuation) are collected with their 1-based line numbers so
// the checkers can turn them into findings.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sagebuild/common/text.h"

namespace sb::distinfo {

struct HeaderField {
  std::string name;   // as written (field names compare case-insensitively)
  std::string value;  // leading/trailing blanks stripped; continuation lines joined with '\n'
  int line = 0;       // line of the `Name:` line
};

struct HeaderProblem {
  int line = 0;
  std::string message;
};

struct EmailHeader {
  // A hostile METADATA can hold millions of lines: at most kMaxFields fields
  // and kMaxProblems problems are kept; the rest are counted.
  static constexpr std::size_t kMaxFields = 100'000;
  static constexpr std::size_t kMaxProblems = 1'000;

  std::vector<HeaderField> fields;  // in file order, repeated fields kept
  std::string body;                 // everything after the first blank line
  std::vector<HeaderProblem> problems;
  std::size_t fields_dropped = 0;
  std::size_t problems_dropped = 0;
  bool utf8 = true;  // the whole text is valid UTF-8

  // Every value of `name` (case-insensitive), in order.
  std::vector<std::string> values(std::string_view name) const;
  std::size_t count(std::string_view name) const;
  // The first field named `name`, or nullptr.
  const HeaderField* first(std::string_view name) const;
};

EmailHeader parse_email_header(std::string_view text);

// Writes fields in the given order, one `Name: value` line each (LF line
// ends); multi-line values are continued with 8 spaces, as setuptools does.
// A non-empty body follows one blank line.
std::string write_email_header(const std::vector<std::pair<std::string, std::string>>& fields,
                               std::string_view body = {});

using sb::is_valid_utf8;  // strict RFC 3629 (common/text.h)

bool iequals(std::string_view a, std::string_view b);

}  // namespace sb::distinfo
