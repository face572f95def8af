// PEP 440 version specifiers ("Version specifiers" in
// reference/spec-version-specifiers.rst): clause parsing with the spec's
// restrictions on wildcards and local labels, and the matching rules of each
// operator, including the exclusive-comparison and pre-release rules.
#include "sagebuild/common/error.h"
#include "sagebuild/common/text.h"
#include "sagebuild/wheel/pep440.h"

#include <array>
#include <utility>

namespace sb::wheel {
namespace {

// Longest spellings first so "===" is not read as "==" followed by "=".
constexpr std::array<std::pair<std::string_view, Operator>, 8> kOperators = {{
    {"===", Operator::ArbitraryEqual},
    {"~=", Operator::Compatible},
    {"==", Operator::Equal},
    {"!=", Operator::NotEqual},
    {"<=", Operator::LessEqual},
    {">=", Operator::GreaterEqual},
    {"<", Operator::Less},
    {">", Operator::Greater},
}};

bool release_prefix_matches(const Version& candidate, const std::vector<std::uint64_t>& prefix) {
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    std::uint64_t c = i < candidate.release.size() ? candidate.release[i] : 0;
    if (c != prefix[i]) return false;
  }
  return true;
}

// The segments after the release, in order, as comparable strings: the spec
// treats "1.1a1" as "1.1.a1" for prefix matching.
std::vector<std::string> suffix_segments(const Version& v) {
  std::vector<std::string> out;
  if (v.pre) out.push_back(std::string(to_string(v.pre->kind)) + std::to_string(v.pre->number));
  if (v.post) out.push_back("post" + std::to_string(*v.post));
  if (v.dev) out.push_back("dev" + std::to_string(*v.dev));
  return out;
}

// "==P.*": same epoch; the release agrees on P's components (zero-padded);
// if P names a pre or post segment, the release must be equal and P's
// segments must start the candidate's.
bool wildcard_matches(const Version& candidate, const Version& prefix) {
  if (candidate.epoch != prefix.epoch) return false;
  auto want = suffix_segments(prefix);
  if (want.empty()) return release_prefix_matches(candidate, prefix.release);
  if (candidate.base_version() != prefix.base_version()) return false;
  auto have = suffix_segments(candidate);
  if (have.size() < want.size()) return false;
  return std::equal(want.begin(), want.end(), have.begin());
}

bool equal_matches(const Specifier& s, const Version& v) {
  if (s.wildcard) return wildcard_matches(v.public_version(), s.version);
  // Without a local label in the clause, the candidate's label is ignored.
  if (s.version.local.empty()) return v.public_version() == s.version;
  return v == s.version;
}

bool compatible_matches(const Specifier& s, const Version& v) {
  Version pub = v.public_version();
  if (pub < s.version) return false;
  std::vector<std::uint64_t> prefix(s.version.release.begin(), s.version.release.end() - 1);
  return pub.epoch == s.version.epoch && release_prefix_matches(pub, prefix);
}

// "<V" excludes pre-releases of V itself unless V is one.
bool less_matches(const Specifier& s, const Version& v) {
  Version pub = v.public_version();
  if (!(pub < s.version)) return false;
  return s.version.is_prerelease() || !pub.is_prerelease() || pub.base_version() != s.version.base_version();
}

// ">V" excludes post-releases of V unless V is one, and local variants of V.
bool greater_matches(const Specifier& s, const Version& v) {
  if (!(v > s.version)) return false;
  bool same_base = v.base_version() == s.version.base_version();
  if (same_base && v.is_postrelease() && !s.version.is_postrelease()) return false;
  return !(same_base && !v.local.empty());
}

std::string validate_operand(Operator op, const Version& v, bool wildcard) {
  bool equality = op == Operator::Equal || op == Operator::NotEqual;
  std::string o(to_string(op));
  if (wildcard && !equality) return "'.*' after " + o + "; expected a prefix match only with == or !=";
  if (wildcard && v.dev) return "prefix match on a dev release; expected ==V.* with V free of .devN (spec)";
  if (wildcard && !v.local.empty()) return "prefix match on a local version; expected ==V.* with V free of '+local'";
  if (!equality && !v.local.empty())
    return "local version '" + v.str() + "' after " + o + "; expected '+local' only with == or !=";
  if (op == Operator::Compatible && v.release.size() < 2)
    return "~= with one release component ('" + v.str() + "'); expected at least two, e.g. ~=2.2";
  return {};
}

bool has_space(std::string_view s) {
  for (char c : s)
    if (is_ascii_space(c)) return true;
  return false;
}

std::optional<Specifier> parse_arbitrary(std::string_view operand, std::string_view text, std::string* why) {
  if (operand.empty() || has_space(operand)) {
    set_why(why, "invalid specifier '" + clip(text) + "': expected one non-blank string after ===");
    return std::nullopt;
  }
  Specifier s;
  s.op = Operator::ArbitraryEqual;
  s.arbitrary = std::string(operand);
  return s;
}

}  // namespace

std::string_view to_string(Operator op) {
  for (const auto& [spelling, o] : kOperators)
    if (o == op) return spelling;
  return "==";
}

std::optional<Specifier> parse_specifier(std::string_view text, std::string* why) {
  std::string_view t = trim_ascii_space(text);
  for (const auto& [spelling, op] : kOperators) {
    if (t.substr(0, spelling.size()) != spelling) continue;
    std::string_view operand = trim_ascii_space(t.substr(spelling.size()));
    if (op == Operator::ArbitraryEqual) return parse_arbitrary(operand, text, why);
    Specifier s;
    s.op = op;
    if (operand.size() >= 2 && operand.substr(operand.size() - 2) == ".*") {
      s.wildcard = true;
      operand.remove_suffix(2);
    }
    std::string version_why;
    auto v = parse_version(operand, &version_why);
    if (!v || has_space(operand)) {
      set_why(why, "invalid specifier '" + clip(text) + "': " + (v ? "whitespace inside the version" : version_why));
      return std::nullopt;
    }
    s.version = *v;
    if (auto problem = validate_operand(op, s.version, s.wildcard); !problem.empty()) {
      set_why(why, "invalid specifier '" + clip(text) + "': " + problem);
      return std::nullopt;
    }
    return s;
  }
  set_why(why, "invalid specifier '" + clip(text) +
                   "': expected an operator (==, !=, <=, >=, <, >, ~=, ===) then a version");
  return std::nullopt;
}

bool Specifier::matches(const Version& v) const {
  switch (op) {
    case Operator::Equal:
      return equal_matches(*this, v);
    case Operator::NotEqual:
      return !equal_matches(*this, v);
    case Operator::LessEqual:
      return v.public_version() <= version;
    case Operator::GreaterEqual:
      return v.public_version() >= version;
    case Operator::Less:
      return less_matches(*this, v);
    case Operator::Greater:
      return greater_matches(*this, v);
    case Operator::Compatible:
      return compatible_matches(*this, v);
    case Operator::ArbitraryEqual: {
      // Case-insensitive string identity with the candidate's spelling.
      std::string a = v.str(), b = arbitrary;
      for (auto* s : {&a, &b})
        for (char& c : *s)
          if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      return a == b;
    }
  }
  return false;
}

// As packaging >= 24.2: every operator but != (which excludes, never asks
// for, a version) and === (whose operand need not be a version) counts.
bool Specifier::names_prerelease() const {
  if (op == Operator::NotEqual || op == Operator::ArbitraryEqual) return false;
  return version.is_prerelease();
}

std::string Specifier::str() const {
  if (op == Operator::ArbitraryEqual) return "===" + arbitrary;
  return std::string(to_string(op)) + version.str() + (wildcard ? ".*" : "");
}

bool SpecifierSet::contains(const Version& v, bool prereleases) const {
  if (v.is_prerelease() && !prereleases) {
    bool named = false;
    for (const auto& s : specs_) named = named || s.names_prerelease();
    if (!named) return false;
  }
  for (const auto& s : specs_)
    if (!s.matches(v)) return false;
  return true;
}

std::string SpecifierSet::str() const {
  std::string out;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (i) out += ',';
    out += specs_[i].str();
  }
  return out;
}

std::optional<SpecifierSet> parse_specifier_set(std::string_view text, std::string* why) {
  std::vector<Specifier> specs;
  if (trim_ascii_space(text).empty()) return SpecifierSet{};
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string_view clause =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::string clause_why;
    auto s = parse_specifier(clause, &clause_why);
    if (!s) {
      set_why(why, trim_ascii_space(clause).empty() ? "empty clause in specifier set '" + clip(text) +
                                                          "': expected clauses separated by single commas"
                                                    : clause_why);
      return std::nullopt;
    }
    specs.push_back(std::move(*s));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return SpecifierSet(std::move(specs));
}

}  // namespace sb::wheel
