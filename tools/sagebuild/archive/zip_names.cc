#include "sagebuild/archive/zip_names.h"

#include <string>
#include <unordered_map>

namespace sb::zip {

namespace {

bool has_non_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return true;
  return false;
}

// A name as messages quote it: control bytes escaped, at most kMaxQuoted bytes.
std::string shown(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, kMaxQuoted)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      static const char* hexd = "0123456789abcdef";
      out += "\\x";
      out += hexd[u >> 4];
      out += hexd[u & 15];
    } else {
      out += c;
    }
  }
  if (name.size() > kMaxQuoted) out += "... (" + std::to_string(name.size() - kMaxQuoted) + " more bytes)";
  return "'" + out + "'";
}

void check_characters(std::string_view name, bool utf8_flag, Findings& out) {
  std::string member(name);
  if (!is_valid_utf8(name)) {
    add(out, "Z6", Severity::Error, member, "name " + shown(name) + " is not valid UTF-8",
        "member names encoded in UTF-8");
  } else if (!utf8_flag && has_non_ascii(name)) {
    add(out, "Z6", Severity::Strict, member,
        "non-ASCII name " + shown(name) + " without the UTF-8 flag (bit 11), so it reads as CP437",
        "general-purpose flag bit 11 set on non-ASCII names");
  }
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      add(out, "Z6", Severity::Error, member, "control character in name " + shown(name),
          "no bytes 0x00-0x1F or 0x7F in member names");
      break;
    }
  }
  if (name.find('\\') != std::string_view::npos)
    add(out, "Z6", Severity::Error, member, "backslash in name " + shown(name), "'/' as the only path separator");
}

void check_components(std::string_view name, Findings& out) {
  std::string member(name);
  bool drive =
      name.size() >= 2 && name[1] == ':' && ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'));
  if (name.empty()) {
    add(out, "Z6", Severity::Error, member, "empty member name", "a relative path");
    return;
  }
  if (name.front() == '/' || drive)
    add(out, "Z6", Severity::Error, member, "absolute path " + shown(name), "a relative path");
  bool dotdot = false, empty_or_dot = false;
  std::string_view rest = name;
  // A directory entry ends in '/': that last empty component is its marker.
  if (rest.back() == '/') rest.remove_suffix(1);
  while (true) {
    auto slash = rest.find('/');
    std::string_view comp = rest.substr(0, slash);
    if (comp == "..") dotdot = true;
    if (comp.empty() || comp == ".") empty_or_dot = true;
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  if (dotdot)
    add(out, "Z6", Severity::Error, member, "'..' component in " + shown(name),
        "a path that stays inside the install directory");
  if (empty_or_dot)
    add(out, "Z6", Severity::Warning, member, "empty or '.' component in " + shown(name), "a normalized path");
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

void check_member_name(std::string_view name, bool utf8_flag, Findings& out) {
  check_characters(name, utf8_flag, out);
  check_components(name, out);
}

void check_name_collisions(const std::vector<Entry>& entries, Findings& out) {
  std::unordered_map<std::string, std::size_t> exact, folded;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string& name = entries[i].name;
    if (!exact.emplace(name, i).second) {
      add(out, "Z3", Severity::Error, name, "duplicate central-directory name " + shown(name),
          "each member name listed once");
      continue;
    }
    auto [it, fresh] = folded.emplace(ascii_lower(name), i);
    if (!fresh)
      add(out, "Z6", Severity::Warning, name,
          "name " + shown(name) + " collides case-insensitively with " + shown(entries[it->second].name),
          "names that stay distinct on case-insensitive file systems");
  }
}

}  // namespace sb::zip
