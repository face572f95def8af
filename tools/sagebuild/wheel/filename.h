// Wheel file names (binary-distribution-format "File name convention"):
// {name}-{version}[-{build tag}]-{python tag}-{abi tag}-{platform tag}.whl,
// parsed into parts plus the F1..F9 findings (docs/verify-rules.md), and built from parts.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/finding.h"
#include "sagebuild/wheel/pep440.h"
#include "sagebuild/wheel/tags.h"

namespace sb::wheel {

struct WheelFilename {
  std::string name;         // as written ("SageAttention"); compare with same_project()
  std::string version_raw;  // as written ("v2.2.0")
  Version version;          // parsed
  std::optional<std::string> build_tag;
  std::vector<std::string> python_tags, abi_tags, platform_tags;  // as written

  TagSets tag_sets() const;
  // Every tag the compressed sets stand for, lowercased. Empty when the sets
  // expand beyond kMaxExpandedTags (parse_wheel_filename reports that as F6).
  std::vector<Tag> expanded() const;
  std::string str() const;  // the file name as written
};

struct ParsedFilename {
  // Present whenever the name splits into 5 or 6 parts and the version parses;
  // `findings` may still hold errors about the other parts.
  std::optional<WheelFilename> filename;
  Findings findings;
  bool ok() const;  // no Error-level finding
};

// Parses a basename (anything up to the last '/' or '\' is ignored) and
// checks it against F1..F9, rule ids and severities as in docs/verify-rules.md.
ParsedFilename parse_wheel_filename(std::string_view basename, std::size_t tag_limit = kMaxExpandedTags);

// Builds a file name from parts: the name escaped (wheel_escape_name), the
// version normalized, the tag sets lowercased, sorted and de-duplicated.
// It does not validate: run parse_wheel_filename on the result for that.
std::string format_wheel_filename(std::string_view project, const Version& version,
                                  const std::optional<std::string>& build_tag, const TagSets& tags);
std::string format_wheel_filename(std::string_view project, const Version& version,
                                  const std::optional<std::string>& build_tag, const Tag& tag);

// ---- Build tags (F5, F7) -------------------------------------------------

// The sort key of a build tag: (int(leading digits), rest as string).
// `digits` has its leading zeros stripped ("0" for zero) and compares as an
// arbitrarily large number, so "99999999999999999999999" needs no bigint.
struct BuildTagKey {
  std::string digits;
  std::string rest;
  std::strong_ordering operator<=>(const BuildTagKey& other) const;
  bool operator==(const BuildTagKey& other) const = default;
};

// nullopt (with `why`) unless the tag starts with a digit and has no '-'.
std::optional<BuildTagKey> build_tag_key(std::string_view tag, std::string* why = nullptr);

// Orders two optional build tags as pip does: no build tag sorts before any
// build tag ("()" < "(0, '')"). Invalid tags sort as absent.
std::strong_ordering compare_build_tags(const std::optional<std::string>& a, const std::optional<std::string>& b);

}  // namespace sb::wheel
