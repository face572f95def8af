#include "sagebuild/verify/report.h"

#include <algorithm>

namespace sb::verify {

std::size_t Report::count(Severity s) const {
  return std::count_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == s; });
}

bool Report::failed(bool lenient) const {
  return count(Severity::Error) > 0 || (!lenient && count(Severity::Strict) > 0);
}

static std::string counted(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string format_human(const Report& r, bool lenient) {
  std::string name = r.path.string(), out;
  for (const auto& f : r.findings) {
    out += name + ": " + f.rule + " " + std::string(to_string(f.severity));
    if (!f.member.empty()) out += " [" + f.member + "]";
    out += ": " + f.message;
    if (!f.expected.empty()) out += "; expected " + f.expected;
    out += "\n";
  }
  out += name + ": " + (r.failed(lenient) ? "FAIL" : "OK") + " (" + counted(r.count(Severity::Error), "error", "errors") + ", " +
         counted(r.count(Severity::Strict), "strict", "strict") + ", " +
         counted(r.count(Severity::Warning), "warning", "warnings") + ")\n";
  return out;
}

nlohmann::json to_json(const Report& r, bool lenient) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"rule", f.rule},
                        {"severity", std::string(to_string(f.severity))},
                        {"member", f.member},
                        {"message", f.message},
                        {"expected", f.expected}});
  return {{"path", r.path.string()},
          {"ok", !r.failed(lenient)},
          {"errors", r.count(Severity::Error)},
          {"strict", r.count(Severity::Strict)},
          {"warnings", r.count(Severity::Warning)},
          {"hashed_bytes", r.hashed_bytes},
          {"findings", findings}};
}

}  // namespace sb::verify
