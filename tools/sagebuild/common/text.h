// Text that comes from a hostile file, made safe to store and to print.
// Member names, RECORD values and METADATA lines are bytes, not text: they
// may be invalid UTF-8 or megabytes long.  Checkers quote them through
// clip(); reports print them through printable().
#pragma once

#include <cstddef>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace sb {

// ASCII whitespace as C's isspace() has it in the "C" locale: space, \t, \n, \v, \f, \r.
constexpr bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// `s` without its leading and trailing ASCII whitespace.
constexpr std::string_view trim_ascii_space(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

// Whether `s` is one or more of the ASCII digits 0-9.
constexpr bool all_ascii_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Strict RFC 3629 UTF-8: no overlongs, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view s);

// Length of the valid UTF-8 sequence starting at s[i], 0 when there is none.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

// `s` as valid UTF-8 without control characters: each byte that is not part
// of a valid sequence, and each C0 control or DEL (which would move a
// terminal's cursor), becomes the four characters \xNN; each C1 control
// (U+0080..U+009F: U+009B is a terminal's CSI) and each bidirectional
// formatting character (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069:
// they reorder what a reader sees) becomes \uNNNN.  Sets *escaped when
// anything was replaced.
std::string printable(std::string_view s, bool* escaped = nullptr);

// printable() for a whole message of ours, which may span lines: '\n' is
// kept, everything else is escaped as printable() does.
std::string printable_message(std::string_view s);

// Output that carries others' bytes as it streams (a compiler's messages
// through ninja, row names and paths in a build's log): each complete line
// goes through printable_message(), so an ESC, a C1 CSI or a bidi override in
// a source file or a matrix value reaches the terminal as \x1b / \u009b /
// \u202e.  A line is held until its '\n' (a chunk may end inside a UTF-8
// sequence), or until it reaches kMaxHeldLine bytes.
class PrintableLines {
 public:
  static constexpr std::size_t kMaxHeldLine = 64 * 1024;
  std::string feed(std::string_view chunk);  // the escaped complete lines
  std::string finish();                      // the escaped rest
 private:
  std::string held_;
};

// An std::ostream whose text reaches `sink` through PrintableLines, line by
// line (flushed at each '\n' and on destruction).
class PrintableOstream : public std::ostream {
 public:
  explicit PrintableOstream(std::ostream& sink);
  ~PrintableOstream() override;

 private:
  class Buf : public std::streambuf {
   public:
    explicit Buf(std::ostream& sink) : sink_(sink) {}
    void drain();

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

   private:
    std::ostream& sink_;
    PrintableLines lines_;
  };
  Buf buf_;
};

// The marks a report puts before a line: the emoji where the terminal's
// locale is UTF-8, plain ASCII elsewhere (a Windows console in a legacy code
// page, LANG=C in a CI container), where the emoji would print as garbage.
struct Marks {
  const char* ok;
  const char* bad;
};
inline constexpr Marks kUtf8Marks{"\u2705", "\u274c"};
inline constexpr Marks kAsciiMarks{"[ok]", "[x]"};

// Whether the locale the environment selects for characters is UTF-8: the
// first of LC_ALL, LC_CTYPE, LANG that is set and not empty ("en_US.UTF-8",
// "C.utf8"), as setlocale(LC_CTYPE, "") picks it.  Null or empty: unset.
bool utf8_locale(const char* lc_all, const char* lc_ctype, const char* lang);
// kUtf8Marks or kAsciiMarks for this process's environment.
Marks marks_for_environment();

// At most `max` bytes of `s`, cut at a UTF-8 sequence boundary, followed by
// "... (N more bytes)" when anything was cut.  A finding quotes a value, never
// a whole 60 MB line.
constexpr std::size_t kMaxQuoted = 256;
std::string clip(std::string_view s, std::size_t max = kMaxQuoted);

// Whether `name` matches `pattern`, where '*' matches any run of characters
// (the allow-list's and the source manifests' globs).  O(pattern x name), no
// recursion: the name may come from a hostile file.
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace sb
