#include "sagebuild/common/text.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>

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

namespace {

// The code point of the valid `n`-byte sequence at s[i].
std::uint32_t code_point(std::string_view s, std::size_t i, std::size_t n) {
  auto b = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[i + k])); };
  if (n == 1) return b(0);
  if (n == 2) return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  if (n == 3) return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

// C1 controls and the bidirectional formatting characters (Unicode's
// Bidi_Control property).
bool hidden_control(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::string escaped_text(std::string_view s, bool keep_newlines, bool* escaped) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence_length(s, i);
    auto c = static_cast<std::uint8_t>(s[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F) && !(keep_newlines && c == '\n'))) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      if (escaped) *escaped = true;
      ++i;
      continue;
    }
    if (std::uint32_t cp = code_point(s, i, n); n > 1 && hidden_control(cp)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += hex[(cp >> shift) & 15];
      if (escaped) *escaped = true;
      i += n;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace

std::string printable(std::string_view s, bool* escaped) { return escaped_text(s, false, escaped); }

std::string printable_message(std::string_view s) { return escaped_text(s, true, nullptr); }

std::string PrintableLines::feed(std::string_view chunk) {
  held_.append(chunk);
  std::size_t end = held_.rfind('\n');
  if (end == std::string::npos) {
    if (held_.size() < kMaxHeldLine) return {};
    // A line without end: printed in pieces, cut before a partial sequence.
    end = held_.size();
    for (int k = 0; k < 3 && end > 0 && (static_cast<std::uint8_t>(held_[end - 1]) & 0xC0) == 0x80; ++k) --end;
    if (end > 0 && static_cast<std::uint8_t>(held_[end - 1]) >= 0xC0) --end;
    if (end == 0) end = held_.size();
  } else {
    ++end;
  }
  std::string out = printable_message(std::string_view(held_).substr(0, end));
  held_.erase(0, end);
  return out;
}

std::string PrintableLines::finish() {
  std::string out = printable_message(held_);
  held_.clear();
  return out;
}

PrintableOstream::PrintableOstream(std::ostream& sink) : std::ostream(nullptr), buf_(sink) { rdbuf(&buf_); }

PrintableOstream::~PrintableOstream() { buf_.drain(); }

void PrintableOstream::Buf::drain() {
  sink_ << lines_.finish();
  sink_.flush();
}

PrintableOstream::Buf::int_type PrintableOstream::Buf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  char ch = traits_type::to_char_type(c);
  xsputn(&ch, 1);
  return c;
}

std::streamsize PrintableOstream::Buf::xsputn(const char* s, std::streamsize n) {
  sink_ << lines_.feed(std::string_view(s, static_cast<std::size_t>(n)));
  return n;
}

int PrintableOstream::Buf::sync() {
  sink_.flush();
  return 0;
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

bool utf8_locale(const char* lc_all, const char* lc_ctype, const char* lang) {
  for (const char* v : {lc_all, lc_ctype, lang}) {
    if (v == nullptr || *v == 0) continue;
    std::string lower;
    for (const char* c = v; *c; ++c)
      if (*c != '-' && *c != '_') lower += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    return lower.find("utf8") != std::string::npos;
  }
  return false;
}

Marks marks_for_environment() {
  return utf8_locale(std::getenv("LC_ALL"), std::getenv("LC_CTYPE"), std::getenv("LANG")) ? kUtf8Marks : kAsciiMarks;
}

}  // namespace sb
