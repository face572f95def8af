// A finding is one rule violated by one input: the unit every checker
// (verify's rules, the zip reader, the ELF reader) reports in.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sb {

// Severity as in docs/verify-rules.md:
//   Error   - the spec says MUST, or pip / installer refuse the wheel;
//   Strict  - the spec or PyPI rejects it though pip installs it;
//   Warning - worth fixing, never fails a default run.
enum class Severity { Warning, Strict, Error };

std::string_view to_string(Severity s);  // "warning" | "strict" | "error"
char severity_letter(Severity s);        // 'W' | 'S' | 'E' (as in MANIFEST.tsv)

struct Finding {
  std::string rule;  // stable id: "F3", "Z6", "R5", "B2" ...
  Severity severity = Severity::Error;
  std::string member;    // the archive member it concerns, empty for the whole file
  std::string message;   // what was found
  std::string expected;  // what was expected, empty when obvious
};

// The findings about one input, bounded.  A hostile wheel can break one rule
// once per line of a 10 MB member (5 million findings, gigabytes), so a list
// keeps at most kMaxPerRule findings of each rule and kMaxFindings in all,
// and counts the rest by rule and by severity: a dropped error still fails
// the wheel, and the report says how many were not shown.  It is a vector
// so that checkers read, sort and filter it as one; only keep(), add() and
// merge() apply the bounds.
class Findings : public std::vector<Finding> {
 public:
  static constexpr std::size_t kMaxPerRule = 200;
  static constexpr std::size_t kMaxFindings = 2000;
  // Texts longer than this are cut (checkers should quote through clip()).
  static constexpr std::size_t kMaxText = 4096;

  using std::vector<Finding>::vector;

  // Appends `f` (its texts clipped) unless a bound is reached; then counts it.
  bool keep(Finding f);
  // True, counting it as dropped, when a finding of `rule` would not be kept:
  // per-line checkers ask before building a message they would throw away.
  bool skip(const std::string& rule, Severity s);
  // keep() for each of `other`'s findings; adds what `other` dropped.
  void merge(const Findings& other);

  std::uint64_t dropped() const;
  std::uint64_t dropped(Severity s) const { return dropped_by_severity_[static_cast<int>(s)]; }
  const std::map<std::string, std::uint64_t>& dropped_by_rule() const { return dropped_by_rule_; }

 private:
  void count_dropped(const std::string& rule, Severity s, std::uint64_t n);
  std::map<std::string, std::size_t> kept_by_rule_;
  std::map<std::string, std::uint64_t> dropped_by_rule_;
  std::array<std::uint64_t, 3> dropped_by_severity_{};
};

// Convenience for checkers: add(out, "R5", Severity::Error, member, msg, expected).
void add(Findings& out, std::string rule, Severity sev, std::string member, std::string message,
         std::string expected = {});

}  // namespace sb
