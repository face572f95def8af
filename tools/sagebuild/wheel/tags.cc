// Compressed tag sets, their expansion, and the tag-level checks of
// docs/verify-rules.md F6 (syntax) and F9 (ABI coherence).
#include "sagebuild/wheel/tags.h"

#include <algorithm>

#include "sagebuild/wheel/names.h"

namespace sb::wheel {
namespace {

void set_why(std::string* why, std::string message) {
  if (why) *why = std::move(message);
}

std::string join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// A Python identifier. Bytes >= 0x80 (UTF-8 of non-ASCII letters) are taken
// as identifier characters: Python allows Unicode XID characters, and we do
// not carry a Unicode database for a case no real wheel exercises.
bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  auto start_ok = [](unsigned char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
  };
  if (!start_ok(static_cast<unsigned char>(s.front()))) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return start_ok(static_cast<unsigned char>(c)) || (c >= '0' && c <= '9'); });
}

struct Component {
  const char* what;  // "interpreter", "abi", "platform"
  const std::vector<std::string>* members;
};

void check_component(const Component& c, std::string_view member, Findings& out) {
  std::string written = join(*c.members, '.');
  for (const auto& m : *c.members) {
    if (m.empty()) {
      add(out, "F6", Severity::Error, std::string(member), std::string("empty ") + c.what + " tag in '" + written + "'",
          "every '.'-separated member non-empty");
      return;
    }
  }
  if (std::string(c.what) == "interpreter") {
    bool bad = false;
    for (const auto& m : *c.members) {
      if (is_identifier(m)) continue;
      bad = true;
      add(out, "F6", Severity::Error, std::string(member), "interpreter tag '" + m + "' is not a Python identifier",
          "e.g. py3, cp312 (no dots inside a version: py2.7 means py2 and 7)");
    }
    if (bad) return;  // case and order warnings would only add noise
  }
  if (ascii_lower(written) != written)
    add(out, "F6", Severity::Warning, std::string(member),
        std::string(c.what) + " tag '" + written + "' is not lowercase", "'" + ascii_lower(written) + "'");
  std::vector<std::string> sorted = *c.members;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != *c.members)
    add(out, "F6", Severity::Warning, std::string(member),
        std::string(c.what) + " tag set '" + written + "' is not sorted", "'" + join(sorted, '.') + "'");
}

// "cp312" -> "312", "cp313t" -> "313t"; "" unless it starts with cp + digit.
std::string_view cpython_suffix(std::string_view tag) {
  if (tag.size() < 3 || tag.substr(0, 2) != "cp" || tag[2] < '0' || tag[2] > '9') return {};
  return tag.substr(2);
}

std::string_view leading_digits(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  return s.substr(0, n);
}

bool is_plain_cpython(std::string_view tag) {
  auto suffix = cpython_suffix(tag);
  return !suffix.empty() && leading_digits(suffix).size() == suffix.size();
}

std::optional<std::pair<unsigned, unsigned>> parse_major_minor(std::string_view v) {
  std::size_t dot = v.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= v.size()) return std::nullopt;
  auto major = v.substr(0, dot), minor = v.substr(dot + 1);
  if (leading_digits(major).size() != major.size() || leading_digits(minor).size() != minor.size() ||
      major.size() > 2 || minor.size() > 3)
    return std::nullopt;
  return std::pair{static_cast<unsigned>(std::stoul(std::string(major))),
                   static_cast<unsigned>(std::stoul(std::string(minor)))};
}

std::string cp_tag(std::pair<unsigned, unsigned> v) {
  return "cp" + std::to_string(v.first) + std::to_string(v.second);
}

}  // namespace

std::string Tag::str() const { return interpreter + "-" + abi + "-" + platform; }

std::string TagSets::str() const {
  return join(interpreters, '.') + "-" + join(abis, '.') + "-" + join(platforms, '.');
}

std::optional<TagSets> split_tag_triple(std::string_view triple, std::string* why) {
  auto parts = split_fields(triple, '-');
  if (parts.size() != 3) {
    set_why(why, "tag '" + std::string(triple) + "' has " + std::to_string(parts.size()) +
                     " '-'-separated components; expected 3 (interpreter-abi-platform)");
    return std::nullopt;
  }
  return TagSets{split_fields(parts[0], '.'), split_fields(parts[1], '.'), split_fields(parts[2], '.')};
}

std::optional<std::vector<Tag>> expand(const TagSets& sets, std::size_t limit, std::string* why) {
  // Multiply with a check at each step so that huge sets cannot overflow.
  std::size_t count = 1;
  for (std::size_t n : {sets.interpreters.size(), sets.abis.size(), sets.platforms.size()}) {
    if (n != 0 && count > limit / n)
      count = limit + 1;
    else
      count *= n;
  }
  if (count > limit) {
    set_why(why, "tag set '" + sets.str() + "' expands to more than " + std::to_string(limit) +
                     " tags; expected at most " + std::to_string(limit));
    return std::nullopt;
  }
  std::vector<Tag> out;
  out.reserve(count);
  for (const auto& i : sets.interpreters)
    for (const auto& a : sets.abis)
      for (const auto& p : sets.platforms) out.push_back({ascii_lower(i), ascii_lower(a), ascii_lower(p)});
  return out;
}

Findings check_tag_sets(const TagSets& sets, std::string_view member) {
  Findings out;
  for (const Component& c : {Component{"interpreter", &sets.interpreters}, Component{"abi", &sets.abis},
                             Component{"platform", &sets.platforms}})
    check_component(c, member, out);
  return out;
}

std::optional<std::vector<Tag>> parse_tags(std::string_view triple, std::size_t limit, std::string* why) {
  auto sets = split_tag_triple(triple, why);
  if (!sets) return std::nullopt;
  for (const auto& f : check_tag_sets(*sets)) {
    if (f.severity == Severity::Error) {
      set_why(why, "invalid tag '" + std::string(triple) + "': " + f.message + "; expected " + f.expected);
      return std::nullopt;
    }
  }
  return expand(*sets, limit, why);
}

Findings check_abi_coherence(const TagSets& sets, std::string_view member) {
  Findings out;
  auto interpreters = sets.interpreters;
  for (auto& i : interpreters) i = ascii_lower(i);
  auto has_interpreter = [&](const std::string& t) {
    return std::find(interpreters.begin(), interpreters.end(), t) != interpreters.end();
  };
  for (const auto& written : sets.abis) {
    std::string abi = ascii_lower(written);
    if (abi == "abi3") {
      for (const auto& i : interpreters) {
        if (is_plain_cpython(i)) continue;
        bool free_threaded = !cpython_suffix(i).empty() && i.back() == 't';
        add(out, "F9", Severity::Warning, std::string(member),
            free_threaded ? "abi3 with free-threaded interpreter '" + i + "': the free-threaded ABI has no stable ABI"
                          : "abi3 with interpreter '" + i + "': abi3 is CPython's stable ABI",
            "cpXY interpreters (e.g. cp39-abi3)");
      }
      continue;
    }
    auto suffix = cpython_suffix(abi);
    if (suffix.empty()) continue;
    std::string interpreter = "cp" + std::string(leading_digits(suffix));
    if (!has_interpreter(interpreter))
      add(out, "F9", Severity::Warning, std::string(member),
          "abi '" + abi + "' without interpreter '" + interpreter + "' (found '" + join(sets.interpreters, '.') + "')",
          interpreter + "-" + abi + (abi.back() == 't' ? " (free-threaded wheels keep the cpXY interpreter tag)" : ""));
  }
  return out;
}

std::string_view to_string(AbiMode mode) { return mode == AbiMode::abi3 ? "abi3" : "per-interpreter"; }

std::optional<InterpreterAbi> cpython_tags(std::string_view python_version, AbiMode mode, std::string_view abi3_floor,
                                           std::string* why) {
  bool free_threaded = !python_version.empty() && python_version.back() == 't';
  auto version =
      parse_major_minor(free_threaded ? python_version.substr(0, python_version.size() - 1) : python_version);
  if (!version) {
    set_why(why, "Python version '" + std::string(python_version) + "': expected MAJOR.MINOR[t], e.g. 3.12 or 3.13t");
    return std::nullopt;
  }
  if (free_threaded && *version < std::pair{3u, 13u}) {
    set_why(why, "free-threaded CPython starts at 3.13, found " + std::string(python_version));
    return std::nullopt;
  }
  std::string cp = cp_tag(*version);
  if (mode == AbiMode::per_interpreter) return InterpreterAbi{cp, free_threaded ? cp + "t" : cp};
  auto floor = parse_major_minor(abi3_floor);
  if (free_threaded || !floor || *version < *floor) {
    set_why(why, "abi3 wheel for Python " + std::string(python_version) + " with floor '" + std::string(abi3_floor) +
                     "': expected a GIL build and a MAJOR.MINOR floor not above it");
    return std::nullopt;
  }
  return InterpreterAbi{cp_tag(*floor), "abi3"};
}

// Every field, empty ones included ("a..b" -> a, "", b): the tag and
// file-name rules must see empty components to reject them.
std::vector<std::string> split_fields(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

}  // namespace sb::wheel
