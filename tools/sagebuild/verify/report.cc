#include "sagebuild/verify/report.h"

#include <algorithm>

#include "sagebuild/common/text.h"

namespace sb::verify {

std::size_t Report::count(Severity s) const {
  auto kept = std::count_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == s; });
  return static_cast<std::size_t>(kept) + findings.dropped(s);
}

bool Report::failed(bool lenient) const {
  return count(Severity::Error) > 0 || (!lenient && count(Severity::Strict) > 0);
}

static std::string counted(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

namespace {

// Everything a report prints comes from the wheel or its name: bytes that
// are not UTF-8, control characters, whole lines of a hostile member.  The
// report shows them escaped (printable) and says so once.
struct Printer {
  bool escaped = false;
  std::string operator()(std::string_view s) { return printable(clip(s, Findings::kMaxText), &escaped); }
};

std::string dropped_summary(const Findings& f) {
  std::string by_rule;
  for (const auto& [rule, n] : f.dropped_by_rule())
    by_rule += (by_rule.empty() ? "" : ", ") + rule + ": " + std::to_string(n);
  return std::to_string(f.dropped()) + " more findings not shown (" + by_rule + "; at most " +
         std::to_string(Findings::kMaxPerRule) + " per rule and " + std::to_string(Findings::kMaxFindings) +
         " per wheel are listed)";
}

constexpr const char* kEscapedNote =
    "bytes that are not UTF-8 and control characters are shown as \\xNN, C1 controls and bidirectional formatting "
    "characters as \\uNNNN";

}  // namespace

std::string format_components(const std::vector<wheel::Part>& parts, const std::vector<std::string>& notes,
                              const Marks& marks) {
  Printer p;
  std::string out;
  for (const auto& part : parts)
    out += std::string("  ") + (part.ok ? marks.ok : marks.bad) + " " + part.label + ": " + p(part.value) +
           (part.decoded.empty() ? "" : " (" + p(part.decoded) + ")") + "\n";
  for (const auto& n : notes) out += "  note: " + p(n) + "\n";
  return out;
}

nlohmann::json components_json(const std::vector<wheel::Part>& parts, const std::vector<std::string>& notes) {
  Printer p;
  nlohmann::json list = nlohmann::json::array(), notes_json = nlohmann::json::array();
  for (const auto& part : parts)
    list.push_back({{"key", part.key},
                    {"label", part.label},
                    {"value", p(part.value)},
                    {"decoded", p(part.decoded)},
                    {"ok", part.ok}});
  for (const auto& n : notes) notes_json.push_back(p(n));
  return {{"components", list}, {"notes", notes_json}};
}

std::string format_human(const Report& r, bool lenient, const Marks& marks) {
  Printer p;
  std::string name = p(r.path.string()), out;
  for (const auto& f : r.findings) {
    out += name + ": " + f.rule + " " + std::string(to_string(f.severity));
    if (!f.member.empty()) out += " [" + p(f.member) + "]";
    out += ": " + p(f.message);
    if (!f.expected.empty()) out += "; expected " + p(f.expected);
    out += "\n";
  }
  if (r.findings.dropped()) out += name + ": " + dropped_summary(r.findings) + "\n";
  if (p.escaped) out += name + ": note: " + kEscapedNote + "\n";
  out += name + ": " + (r.failed(lenient) ? "FAIL" : "OK") + " (" +
         counted(r.count(Severity::Error), "error", "errors") + ", " +
         counted(r.count(Severity::Strict), "strict", "strict") + ", " +
         counted(r.count(Severity::Warning), "warning", "warnings") + ")\n";
  if (!r.failed(lenient)) out += format_components(r.components, r.component_notes, marks);
  return out;
}

nlohmann::json to_json(const Report& r, bool lenient) {
  // nlohmann::json refuses to serialize invalid UTF-8 (type_error.316), so no
  // string reaches it unescaped.
  Printer p;
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"rule", p(f.rule)},
                        {"severity", std::string(to_string(f.severity))},
                        {"member", p(f.member)},
                        {"message", p(f.message)},
                        {"expected", p(f.expected)}});
  nlohmann::json dropped = {{"total", r.findings.dropped()}, {"by_rule", nlohmann::json::object()}};
  for (const auto& [rule, n] : r.findings.dropped_by_rule()) dropped["by_rule"][p(rule)] = n;
  nlohmann::json j = {{"path", p(r.path.string())},
                      {"ok", !r.failed(lenient)},
                      {"errors", r.count(Severity::Error)},
                      {"strict", r.count(Severity::Strict)},
                      {"warnings", r.count(Severity::Warning)},
                      {"hashed_bytes", r.hashed_bytes},
                      {"findings", findings},
                      {"dropped", dropped}};
  nlohmann::json components = components_json(r.components, r.component_notes);
  j["components"] = components["components"];
  j["component_notes"] = components["notes"];
  j["escaped"] = p.escaped;
  if (p.escaped) j["note"] = kEscapedNote;
  return j;
}

}  // namespace sb::verify
