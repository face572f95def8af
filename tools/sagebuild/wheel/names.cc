// Project-name normalization. Both forms collapse runs of separators; they
// differ only in the character a run becomes ('-' canonical, '_' in wheels).
#include "sagebuild/wheel/names.h"

namespace sb::wheel {
namespace {

bool is_name_sep(char c) { return c == '-' || c == '_' || c == '.'; }

std::string collapse(std::string_view name, char replacement) {
  std::string out;
  out.reserve(name.size());
  bool in_run = false;
  for (char c : name) {
    if (is_name_sep(c)) {
      if (!in_run) out += replacement;
      in_run = true;
      continue;
    }
    in_run = false;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

}  // namespace

bool is_ascii_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

bool is_ascii_name_char(char c) { return is_ascii_alnum(c) || c == '.' || c == '_'; }

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string canonicalize_name(std::string_view name) { return collapse(name, '-'); }

std::string wheel_escape_name(std::string_view name) { return collapse(name, '_'); }

bool is_valid_project_name(std::string_view name) {
  if (name.empty() || !is_ascii_alnum(name.front()) || !is_ascii_alnum(name.back())) return false;
  for (char c : name)
    if (!is_ascii_alnum(c) && !is_name_sep(c)) return false;
  return true;
}

bool same_project(std::string_view a, std::string_view b) { return canonicalize_name(a) == canonicalize_name(b); }

}  // namespace sb::wheel
