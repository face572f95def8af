// PEP 508 dependency specifiers (core metadata Requires-Dist): the name,
// extras, a version specifier set or a direct URL, and environment markers.
// Used to validate Requires-Dist (docs/verify-rules.md M6) and to write our torch pin.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/wheel/pep440.h"

namespace sb::wheel {

// One side of a marker comparison: an environment variable such as
// python_version, or a quoted string literal (stored unquoted).
struct MarkerValue {
  bool is_variable = false;
  std::string text;
  std::string str() const;  // variable name, or the literal quoted with '"'
};

// A marker expression tree. Compare nodes hold `lhs op rhs`; And / Or nodes
// hold two or more children. Parentheses are kept implicitly by the tree.
struct Marker {
  enum class Kind { Compare, And, Or };
  Kind kind = Kind::Compare;
  MarkerValue lhs;
  std::string op;  // "<=", "<", "!=", "===", "==", ">=", ">", "~=", "in", "not in"
  MarkerValue rhs;
  std::vector<Marker> children;

  std::string str() const;  // canonical spelling, parenthesized where needed
};

struct Requirement {
  std::string name;                 // as written
  std::vector<std::string> extras;  // as written, in order
  SpecifierSet specifier;           // empty when none or when `url` is set
  std::optional<std::string> url;   // "name @ url"
  std::optional<Marker> marker;

  // e.g. "torch==2.8.0", "foo[bar]>=1.0; python_version >= \"3.9\"".
  std::string str() const;
};

// Parses one Requires-Dist value. On failure returns nullopt and, when `why`
// is given, says where parsing stopped and what was expected there.
std::optional<Requirement> parse_requirement(std::string_view text, std::string* why = nullptr);

// Parses a bare marker expression (the text after ';').
std::optional<Marker> parse_marker(std::string_view text, std::string* why = nullptr);

// A pin `name==version` (our torch pin: pin_requirement("torch", 2.8.0)).
Requirement pin_requirement(std::string_view name, const Version& version);

}  // namespace sb::wheel
