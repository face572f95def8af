#include "sagebuild/distinfo/entry_points.h"

#include <cctype>
#include <cstdint>
#include <map>

#include "sagebuild/common/text.h"
#include "sagebuild/distinfo/email_header.h"

namespace sb::distinfo {

namespace {

// An INI value or line without its blanks (a CRLF file leaves a CR).
std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_scripts_group(std::string_view g) { return g == "console_scripts" || g == "gui_scripts"; }

// Decodes one UTF-8 code point at s[i] (input already validated); advances i.
std::uint32_t next_code_point(std::string_view s, std::size_t& i) {
  auto c = static_cast<std::uint8_t>(s[i]);
  int n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
  std::uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (int k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
  i += n;
  return cp;
}

// Python's \w for str: letters, digits and '_' in any script.  Outside ASCII
// we accept every code point except the Unicode spaces, the C1 controls and
// the invisible format characters (category Cf, none of them \w): the bidi
// controls (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069), which make a
// script name read as another, and the zero-width ones.  Script names become
// file names a user types.
bool is_word_code_point(std::uint32_t cp) {
  if (cp < 0x80) return std::isalnum(static_cast<int>(cp)) || cp == '_';
  if (cp < 0xA0 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
      cp == 0x202F || cp == 0x205F || cp == 0x3000)
    return false;
  if (cp == 0xAD || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
      (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF)
    return false;
  return true;
}

bool is_word_or(std::string_view s, std::string_view extra) {
  if (s.empty() || !is_valid_utf8(s)) return false;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = next_code_point(s, i);
    if (!is_word_code_point(cp) && (cp >= 0x80 || extra.find(static_cast<char>(cp)) == std::string_view::npos))
      return false;
  }
  return true;
}

}  // namespace

bool is_pypi_script_name(std::string_view name) { return is_word_or(name, ".-"); }

bool script_name_stays_inside(std::string_view name) {
  if (name.empty() || name.front() == '/') return false;
  int depth = 0;
  for (std::size_t start = 0; start <= name.size();) {
    std::size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part == "..") {
      if (--depth < 0) return false;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    start = end + 1;
  }
  return depth > 0;  // "." or "a/.." would name the scripts directory itself
}

bool is_valid_entry_point_value(std::string_view value, bool require_attr) {
  value = trim_blanks(value);
  std::size_t bracket = value.find('[');
  std::string_view extras;
  if (bracket != std::string_view::npos) {
    extras = trim_blanks(value.substr(bracket));
    value = trim_blanks(value.substr(0, bracket));
    if (extras.size() < 2 || extras.back() != ']') return false;
  }
  std::size_t colon = value.find(':');
  std::string_view module = trim_blanks(value.substr(0, colon));
  if (!is_word_or(module, ".")) return false;
  if (colon == std::string_view::npos) return !require_attr;
  return is_word_or(trim_blanks(value.substr(colon + 1)), ".");
}

EntryPointsParse parse_entry_points(std::string_view text, std::string_view member, std::size_t max_entries) {
  EntryPointsParse out;
  std::string m(member);
  if (!is_valid_utf8(text)) {
    add(out.findings, "E1", Severity::Strict, m, "entry_points.txt is not valid UTF-8", "UTF-8 text");
    return out;
  }
  std::string group;
  std::map<std::pair<std::string, std::string>, int> seen;
  int line_no = 0;
  std::size_t skipped = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    std::string_view line = trim_blanks(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    bool bad_header = line.front() == '[' && (line.back() != ']' || line.size() < 3);
    bool bad_line = line.front() != '[' && (line.find('=') == std::string_view::npos || group.empty());
    if ((bad_header || bad_line) && out.findings.skip("E1", Severity::Strict)) continue;
    std::string where = m + ":" + std::to_string(line_no);
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3) {
        add(out.findings, "E1", Severity::Strict, m, where + ": malformed section header '" + clip(line) + "'",
            "[section]");
        continue;
      }
      group = std::string(trim_blanks(line.substr(1, line.size() - 2)));
      continue;
    }
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || group.empty()) {
      add(out.findings, "E1", Severity::Strict, m,
          where + ": '" + clip(line) + "' " + (group.empty() ? "is outside any section" : "has no '='"),
          "name = module:attr inside a [section]");
      continue;
    }
    if (out.entries.size() >= max_entries) {
      ++skipped;
      continue;
    }
    EntryPoint ep{group, std::string(trim_blanks(line.substr(0, eq))), std::string(trim_blanks(line.substr(eq + 1))),
                  line_no};
    auto [it, fresh] = seen.emplace(std::make_pair(ep.group, ep.name), line_no);
    if (!fresh)  // configparser (strict) refuses a repeated option in one section
      add(out.findings, "E1", Severity::Strict, m,
          where + ": '" + clip(ep.name) + "' repeats line " + std::to_string(it->second) + " in [" + clip(group) + "]",
          "each name once per section");
    out.entries.push_back(std::move(ep));
  }
  if (skipped)
    add(out.findings, "E1", Severity::Error, m,
        std::to_string(skipped) + " entry points after the first " + std::to_string(max_entries) + " were not checked",
        "at most " + std::to_string(max_entries) + " entry points");
  return out;
}

static void check_script_entry(const EntryPoint& ep, const std::string& m, Findings& out) {
  std::string where = m + ":" + std::to_string(ep.line) + " [" + clip(ep.group) + "] '" + clip(ep.name) + "'";
  if (!script_name_stays_inside(ep.name))
    add(out, "E2", Severity::Error, m, where + ": script would be written outside the scripts directory",
        "a file name inside the scripts directory");
  else if (!is_pypi_script_name(ep.name))
    add(out, "E2", Severity::Strict, m, where + ": name has characters PyPI refuses", "a name matching [\\w.-]+");
  if (!is_valid_entry_point_value(ep.value, true))
    add(out, "E3", Severity::Error, m, where + ": value '" + clip(ep.value) + "' is not module:callable",
        "module:attr, optionally followed by [extras]");
}

Findings check_entry_points(const std::vector<EntryPoint>& entries, std::string_view member,
                            const std::vector<std::string>& data_scripts) {
  Findings out;
  std::string m(member);
  std::map<std::string, std::string> script_owner;  // script name -> where it came from
  for (const auto& s : data_scripts) script_owner.emplace(s, ".data/scripts");
  for (const auto& ep : entries) {
    if (!is_scripts_group(ep.group)) {
      if (!is_valid_entry_point_value(ep.value, false))
        add(out, "E3", Severity::Warning, m,
            m + ":" + std::to_string(ep.line) + " [" + clip(ep.group) + "] value '" + clip(ep.value) +
                "' is not module[:attr]",
            "module[:attr] [extras]");
      continue;
    }
    check_script_entry(ep, m, out);
    auto [it, fresh] = script_owner.emplace(ep.name, ep.group);
    if (!fresh)
      add(out, "E4", Severity::Warning, m,
          "script '" + clip(ep.name) + "' from [" + clip(ep.group) + "] is also provided by " + clip(it->second),
          "each script name once across console_scripts, gui_scripts and .data/scripts");
  }
  return out;
}

}  // namespace sb::distinfo
