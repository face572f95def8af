#include "sagebuild/common/text.h"

#include <cstdint>

namespace sb {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<std::uint8_t>(s[k]); };
  std::uint8_t c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (n == 0 || c > 0xF4 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  std::uint8_t c1 = b(i + 1);
  if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong 3-byte
  if (c == 0xED && c1 > 0x9F) return 0;  // UTF-16 surrogate
  if (c == 0xF0 && c1 < 0x90) return 0;  // overlong 4-byte
  if (c == 0xF4 && c1 > 0x8F) return 0;  // above U+10FFFF
  return n;
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string printable(std::string_view s, bool* escaped) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence_length(s, i);
    auto c = static_cast<std::uint8_t>(s[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      if (escaped) *escaped = true;
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string clip(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t cut = max;
  // Back up over continuation bytes (at most 3: a sequence is at most 4
  // bytes) so a multi-byte character is not split.
  for (int k = 0; k < 3 && cut > 0 && (static_cast<std::uint8_t>(s[cut]) & 0xC0) == 0x80; ++k) --cut;
  return std::string(s.substr(0, cut)) + "... (" + std::to_string(s.size() - cut) + " more bytes)";
}

// Iterative, backtracking only to the last '*'.
bool glob_match(std::string_view p, std::string_view s) {
  std::size_t pi = 0, si = 0, star = std::string_view::npos, resume = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      resume = si;
    } else if (pi < p.size() && p[pi] == s[si]) {
      ++pi, ++si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++resume;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace sb
