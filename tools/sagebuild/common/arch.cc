#include "sagebuild/common/arch.h"

#include <algorithm>

#include "sagebuild/common/text.h"

namespace sb {

std::string Arch::capability() const { return std::to_string(sm / 10) + "." + std::to_string(sm % 10); }

std::string Arch::name() const { return capability() + (arch_specific ? "a" : ""); }

std::string Arch::code() const { return std::to_string(sm) + (arch_specific ? "a" : ""); }

std::optional<Arch> parse_arch(std::string_view text) {
  std::size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 2) return std::nullopt;
  std::string_view rest = text.substr(dot + 1);
  bool specific = !rest.empty() && rest.back() == 'a';
  if (specific) rest.remove_suffix(1);
  if (rest.size() != 1 || rest[0] < '0' || rest[0] > '9') return std::nullopt;
  int major = 0;
  for (char c : text.substr(0, dot)) {
    if (c < '0' || c > '9') return std::nullopt;
    major = major * 10 + (c - '0');
  }
  if (major == 0 || (dot == 2 && text[0] == '0')) return std::nullopt;
  return Arch{major * 10 + (rest[0] - '0'), specific};
}

std::string not_an_arch(std::string_view text) {
  return "'" + clip(text, 80) +
         "' is not a CUDA arch; expected <major>.<minor>[a]: the compute capability (\"8.6\"), with an 'a' for "
         "an arch-specific target (\"9.0a\")";
}

Arch parse_arch_arg(std::string_view text, const std::string& what) {
  if (auto a = parse_arch(text)) return *a;
  throw UsageError(what + ": " + not_an_arch(text));
}

Arch parse_arch_at(std::string_view text, const SourceLocation& where) {
  if (auto a = parse_arch(text)) return *a;
  throw ConfigError(where, not_an_arch(text));
}

bool arch_at_least(const Arch& a, const Arch& min) { return a.sm >= min.sm; }

bool same_base_arch(const Arch& row_arch, const Arch& target) { return row_arch.sm == target.sm; }

bool contains_arch(const std::vector<Arch>& archs, const Arch& arch) {
  return std::find(archs.begin(), archs.end(), arch) != archs.end();
}

std::optional<Arch> ptx_arch(const std::vector<Arch>& sorted_archs) {
  for (auto it = sorted_archs.rbegin(); it != sorted_archs.rend(); ++it)
    if (!it->arch_specific) return *it;
  return std::nullopt;
}

}  // namespace sb
