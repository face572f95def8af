// A finding is one rule violated by one input: the unit every checker
// (verify's rules, the zip reader, the ELF reader) reports in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sb {

// Severity as in ../shared/wheel-corpus/CHECKLIST.md:
//   Error   - the spec says MUST, or pip / installer refuse the wheel;
//   Strict  - the spec or PyPI rejects it though pip installs it;
//   Warning - worth fixing, never fails a default run.
enum class Severity { Warning, Strict, Error };

std::string_view to_string(Severity s);  // "warning" | "strict" | "error"
char severity_letter(Severity s);         // 'W' | 'S' | 'E' (as in MANIFEST.tsv)

struct Finding {
  std::string rule;      // stable id: "F3", "Z6", "R5", "B2" ...
  Severity severity = Severity::Error;
  std::string member;    // the archive member it concerns, empty for the whole file
  std::string message;   // what was found
  std::string expected;  // what was expected, empty when obvious
};

using Findings = std::vector<Finding>;

// Convenience for checkers: add(out, "R5", Severity::Error, member, msg, expected).
inline void add(Findings& out, std::string rule, Severity sev, std::string member,
                std::string message, std::string expected = {}) {
  out.push_back(Finding{std::move(rule), sev, std::move(member), std::move(message),
                        std::move(expected)});
}

}  // namespace sb
