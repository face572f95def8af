// Wheel file-name parsing: split, then one check per rule of docs/verify-rules.md
// (F1 extension, F2 parts, F3 name, F4 version, F5 build tag, F6 tags,
// F8 platforms, F9 ABI). Every problem becomes a finding; parsing goes on as
// far as it can so that one run reports everything wrong with a name.
#include "sagebuild/wheel/filename.h"

#include <algorithm>

#include "sagebuild/wheel/names.h"

namespace sb::wheel {
namespace {

constexpr std::string_view kExtension = ".whl";

// Length of the UTF-8 sequence starting at s[i] (>= 2), or 0 when malformed.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

std::string hex_byte(unsigned char b) {
  const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

// The first character of `name` that may not appear in a wheel's name part,
// or "" when there is none; sets `non_ascii` when it meets UTF-8 letters.
// packaging accepts Unicode \w; without a Unicode database we accept any
// well-formed non-ASCII character and let the Strict finding flag it.
std::string first_bad_name_char(std::string_view name, bool& non_ascii) {
  for (std::size_t i = 0; i < name.size();) {
    auto b = static_cast<unsigned char>(name[i]);
    if (is_ascii_name_char(name[i])) {
      ++i;
    } else if (std::size_t n = b >= 0x80 ? utf8_sequence(name, i) : 0) {
      non_ascii = true;
      i += n;
    } else if (b >= 0x20 && b < 0x7F) {
      return std::string("'") + name[i] + "'";
    } else {
      return (b < 0x80 ? "control character " : "invalid UTF-8 byte ") + hex_byte(b);
    }
  }
  return {};
}

void check_name(const std::string& name, Findings& out) {
  if (name.empty()) {
    add(out, "F3", Severity::Error, "", "empty project name", "{name}-{version}-...");
    return;
  }
  bool non_ascii = false;
  if (auto bad = first_bad_name_char(name, non_ascii); !bad.empty())
    add(out, "F3", Severity::Error, "", "project name '" + name + "' contains " + bad,
        "only letters, digits, '.' and '_' ('-' must be escaped to '_')");
  if (name.find("__") != std::string::npos)
    add(out, "F3", Severity::Error, "", "project name '" + name + "' contains '__'",
        "single '_' between words (packaging rejects '__')");
  if (non_ascii)
    add(out, "F3", Severity::Strict, "", "project name '" + name + "' is not ASCII", "an ASCII core-metadata Name");
  else if (!is_ascii_alnum(name.front()) || !is_ascii_alnum(name.back()))
    add(out, "F3", Severity::Strict, "", "project name '" + name + "' does not start and end with a letter or digit",
        "a valid core-metadata Name");
  if (std::string norm = wheel_escape_name(name); norm != name)
    add(out, "F3", Severity::Warning, "", "name '" + name + "' not normalized", "'" + norm + "'");
}

std::optional<Version> check_version(const std::string& raw, Findings& out) {
  std::string why;
  auto v = parse_version(raw, &why);
  if (!v) {
    add(out, "F4", Severity::Error, "", why, "a PEP 440 version such as 2.2.0");
    return std::nullopt;
  }
  if (v->str() != raw)
    add(out, "F4", Severity::Warning, "", "version '" + raw + "' not normalized", "'" + v->str() + "'");
  return v;
}

void check_build_tag(const std::string& tag, Findings& out) {
  std::string why;
  if (!build_tag_key(tag, &why))
    add(out, "F5", Severity::Error, "", why, "a build tag starting with a digit, e.g. 1 or 280.129");
}

void check_tags(const TagSets& sets, std::size_t limit, Findings& out) {
  Findings f6 = check_tag_sets(sets);
  bool syntax_ok = std::none_of(f6.begin(), f6.end(), [](const Finding& f) { return f.severity == Severity::Error; });
  out.insert(out.end(), f6.begin(), f6.end());
  if (!syntax_ok) return;
  std::string why;
  if (!expand(sets, limit, &why)) add(out, "F6", Severity::Error, "", why, "a compressed tag set of reasonable size");
  Findings f8 = check_platforms(sets.platforms);
  Findings f9 = check_abi_coherence(sets);
  out.insert(out.end(), f8.begin(), f8.end());
  out.insert(out.end(), f9.begin(), f9.end());
}

std::string_view basename_of(std::string_view path) {
  std::size_t slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> normalized_set(const std::vector<std::string>& members) {
  std::vector<std::string> out;
  for (const auto& m : members) out.push_back(ascii_lower(m));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int compare_digit_strings(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

TagSets WheelFilename::tag_sets() const { return TagSets{python_tags, abi_tags, platform_tags}; }

std::vector<Tag> WheelFilename::expanded() const { return expand(tag_sets()).value_or(std::vector<Tag>{}); }

std::string WheelFilename::str() const {
  std::string out = name + "-" + version_raw;
  if (build_tag) out += "-" + *build_tag;
  return out + "-" + tag_sets().str() + std::string(kExtension);
}

bool ParsedFilename::ok() const {
  return std::none_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::Error; });
}

ParsedFilename parse_wheel_filename(std::string_view path, std::size_t tag_limit) {
  ParsedFilename result;
  std::string_view base = basename_of(path);
  if (base.size() <= kExtension.size() || base.substr(base.size() - kExtension.size()) != kExtension) {
    add(result.findings, "F1", Severity::Error, "", "'" + std::string(base) + "' does not end in '.whl'",
        "{name}-{version}[-{build}]-{python}-{abi}-{platform}.whl (lowercase '.whl')");
    return result;
  }
  auto parts = split_fields(base.substr(0, base.size() - kExtension.size()), '-');
  if (parts.size() != 5 && parts.size() != 6) {
    add(result.findings, "F2", Severity::Error, "",
        "'" + std::string(base) + "' has " + std::to_string(parts.size()) + " '-'-separated parts",
        "5 or 6: name-version[-build]-python-abi-platform ('-' inside a part must be '_')");
    return result;
  }
  Findings& out = result.findings;
  check_name(parts[0], out);
  auto version = check_version(parts[1], out);
  std::optional<std::string> build;
  if (parts.size() == 6) {
    build = parts[2];
    check_build_tag(*build, out);
  }
  std::size_t t = parts.size() - 3;
  TagSets sets{split_fields(parts[t], '.'), split_fields(parts[t + 1], '.'), split_fields(parts[t + 2], '.')};
  check_tags(sets, tag_limit, out);
  if (version)
    result.filename = WheelFilename{parts[0], parts[1], *version, build, sets.interpreters, sets.abis, sets.platforms};
  return result;
}

std::string format_wheel_filename(std::string_view project, const Version& version,
                                  const std::optional<std::string>& build_tag, const TagSets& tags) {
  std::string out = wheel_escape_name(project) + "-" + version.str();
  if (build_tag) out += "-" + *build_tag;
  TagSets norm{normalized_set(tags.interpreters), normalized_set(tags.abis), normalized_set(tags.platforms)};
  return out + "-" + norm.str() + std::string(kExtension);
}

std::string format_wheel_filename(std::string_view project, const Version& version,
                                  const std::optional<std::string>& build_tag, const Tag& tag) {
  return format_wheel_filename(project, version, build_tag, TagSets{{tag.interpreter}, {tag.abi}, {tag.platform}});
}

std::strong_ordering BuildTagKey::operator<=>(const BuildTagKey& o) const {
  if (int c = compare_digit_strings(digits, o.digits); c != 0)
    return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
  int c = rest.compare(o.rest);
  return c < 0 ? std::strong_ordering::less : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
}

std::optional<BuildTagKey> build_tag_key(std::string_view tag, std::string* why) {
  std::size_t n = 0;
  while (n < tag.size() && tag[n] >= '0' && tag[n] <= '9') ++n;
  std::string problem;
  if (n == 0)
    problem = "build tag '" + std::string(tag) + "' does not start with a digit";
  else if (tag.find('-') != std::string_view::npos)
    problem = "build tag '" + std::string(tag) + "' contains '-'";
  if (!problem.empty()) {
    if (why) *why = problem;
    return std::nullopt;
  }
  std::string_view digits = tag.substr(0, n);
  std::size_t nz = digits.find_first_not_of('0');
  return BuildTagKey{nz == std::string_view::npos ? "0" : std::string(digits.substr(nz)), std::string(tag.substr(n))};
}

std::strong_ordering compare_build_tags(const std::optional<std::string>& a, const std::optional<std::string>& b) {
  auto ka = a ? build_tag_key(*a) : std::nullopt;
  auto kb = b ? build_tag_key(*b) : std::nullopt;
  if (ka && kb) return *ka <=> *kb;
  return ka.has_value() <=> kb.has_value();  // absent sorts first, as pip's ()
}

}  // namespace sb::wheel
