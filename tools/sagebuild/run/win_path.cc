#include "sagebuild/run/win_path.h"

namespace sb::run {

std::string to_backslashes(std::string_view path) {
  std::string out(path);
  for (char& c : out) {
    if (c == '/') c = '\\';
  }
  return out;
}

std::string win_join(std::string_view base, std::string_view rest) {
  std::string a = to_backslashes(base);
  std::string b = to_backslashes(rest);
  if (a.empty()) return b;
  while (!b.empty() && b.front() == '\\') b.erase(0, 1);
  while (a.size() > 1 && a.back() == '\\' && a[a.size() - 2] != ':') a.pop_back();
  if (a.back() != '\\') a += '\\';
  return a + b;
}

static char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool win_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

static std::size_t last_separator(std::string_view path) { return path.find_last_of("\\/"); }

std::string win_parent(std::string_view path) {
  std::size_t sep = last_separator(path);
  if (sep == std::string_view::npos) return {};
  // Keep the root's separator: the parent of "C:\x" is "C:\", not "C:"
  // (which would mean the current directory of drive C).
  if (sep == 2 && path[1] == ':') return to_backslashes(path.substr(0, 3));
  if (sep == 0) return "\\";
  return to_backslashes(path.substr(0, sep));
}

std::string win_filename(std::string_view path) {
  std::size_t sep = last_separator(path);
  return std::string(sep == std::string_view::npos ? path : path.substr(sep + 1));
}

bool win_has_directory(std::string_view path) {
  return path.find_first_of("\\/") != std::string_view::npos || (path.size() >= 2 && path[1] == ':');
}

std::optional<std::string> win_search_path(std::string_view name, std::string_view path_value,
                                           const std::vector<std::string>& extensions,
                                           const std::function<bool(const std::string&)>& exists) {
  if (name.empty()) return std::nullopt;
  if (win_has_directory(name)) return std::string(name);
  bool has_extension = name.find('.') != std::string_view::npos;
  while (!path_value.empty()) {
    std::size_t semi = path_value.find(';');
    std::string_view dir = path_value.substr(0, semi);
    path_value = semi == std::string_view::npos ? std::string_view() : path_value.substr(semi + 1);
    // PATH entries may be quoted ("C:\Program Files\x"); the quotes are not part of the name.
    if (dir.size() >= 2 && dir.front() == '"' && dir.back() == '"') dir = dir.substr(1, dir.size() - 2);
    if (dir.empty()) continue;
    std::string base = win_join(dir, name);
    if (has_extension) {
      if (exists(base)) return base;
      continue;
    }
    for (const auto& ext : extensions)
      if (exists(base + ext)) return base + ext;
  }
  return std::nullopt;
}

}  // namespace sb::run
