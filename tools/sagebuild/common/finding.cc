#include "sagebuild/common/finding.h"

#include "sagebuild/common/text.h"

namespace sb {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::Warning:
      return "warning";
    case Severity::Strict:
      return "strict";
    case Severity::Error:
      return "error";
  }
  return "error";
}

char severity_letter(Severity s) {
  switch (s) {
    case Severity::Warning:
      return 'W';
    case Severity::Strict:
      return 'S';
    case Severity::Error:
      return 'E';
  }
  return 'E';
}

void Findings::count_dropped(const std::string& rule, Severity s, std::uint64_t n) {
  dropped_by_rule_[rule] += n;
  dropped_by_severity_[static_cast<int>(s)] += n;
}

bool Findings::keep(Finding f) {
  std::size_t& kept = kept_by_rule_[f.rule];
  if (size() >= kMaxFindings || kept >= kMaxPerRule) {
    count_dropped(f.rule, f.severity, 1);
    return false;
  }
  ++kept;
  for (std::string* text : {&f.member, &f.message, &f.expected})
    if (text->size() > kMaxText) *text = clip(*text, kMaxText);
  push_back(std::move(f));
  return true;
}

bool Findings::skip(const std::string& rule, Severity s) {
  auto it = kept_by_rule_.find(rule);
  if (size() < kMaxFindings && (it == kept_by_rule_.end() || it->second < kMaxPerRule)) return false;
  count_dropped(rule, s, 1);
  return true;
}

void Findings::merge(const Findings& other) {
  for (const Finding& f : other) keep(f);
  for (const auto& [rule, n] : other.dropped_by_rule_) dropped_by_rule_[rule] += n;
  for (int s = 0; s < 3; ++s) dropped_by_severity_[s] += other.dropped_by_severity_[s];
}

std::uint64_t Findings::dropped() const {
  return dropped_by_severity_[0] + dropped_by_severity_[1] + dropped_by_severity_[2];
}

void add(Findings& out, std::string rule, Severity sev, std::string member, std::string message, std::string expected) {
  out.keep(Finding{std::move(rule), sev, std::move(member), std::move(message), std::move(expected)});
}

}  // namespace sb
