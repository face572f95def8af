// Text from hostile files: UTF-8 validity, escaping for reports, clipping.
#include <catch2/catch.hpp>

#include <sstream>

#include "sagebuild/common/text.h"

using namespace sb;

TEST_CASE("is_valid_utf8 is strict RFC 3629") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("abc\xd0"));           // truncated sequence
  CHECK_FALSE(is_valid_utf8("\xff"));
}

TEST_CASE("printable escapes invalid bytes and control characters, and says so") {
  bool escaped = false;
  CHECK(printable("pkg/h\xc3\xa9llo.py", &escaped) == "pkg/h\xc3\xa9llo.py");
  CHECK_FALSE(escaped);
  CHECK(printable("pkg/\xff\xfe\xc3\xa9\xd0", &escaped) == "pkg/\\xff\\xfe\xc3\xa9\\xd0");
  CHECK(escaped);
  escaped = false;
  CHECK(printable(std::string("a\0b\x1b[2J\x7f", 8), &escaped) == "a\\x00b\\x1b[2J\\x7f");
  CHECK(escaped);
  CHECK(is_valid_utf8(printable("\xc0\xaf\xed\xa0\x80\xf8\x88\x80\x80\x80")));
}

TEST_CASE("printable escapes C1 controls and bidirectional overrides") {
  bool escaped = false;
  // U+009B (CSI as one C1 character) and U+202E (right-to-left override).
  CHECK(printable("a\xc2\x9b"
                  "2Jb",
                  &escaped) == "a\\u009b2Jb");
  CHECK(escaped);
  CHECK(printable("evil\xe2\x80\xaegpj.exe") == "evil\\u202egpj.exe");
  CHECK(printable("\xe2\x81\xa6x\xe2\x81\xa9\xd8\x9c\xe2\x80\x8f") == "\\u2066x\\u2069\\u061c\\u200f");
  // Neighbours that are ordinary text stay as they are: U+00A0, U+2030, U+2065.
  escaped = false;
  CHECK(printable("\xc2\xa0\xe2\x80\xb0\xe2\x81\xa5", &escaped) == "\xc2\xa0\xe2\x80\xb0\xe2\x81\xa5");
  CHECK_FALSE(escaped);
}

TEST_CASE("printable_message keeps our line breaks and escapes the rest") {
  CHECK(printable_message("rows look like:\n  a\n  b") == "rows look like:\n  a\n  b");
  CHECK(printable_message("x\r\n\x1b[2J\xc2\x9b") == "x\\x0d\n\\x1b[2J\\u009b");
}

TEST_CASE("clip keeps short texts and cuts long ones at a character boundary") {
  CHECK(clip("short", 10) == "short");
  CHECK(clip(std::string(100, 'a'), 10) == "aaaaaaaaaa... (90 more bytes)");
  // "é" is 2 bytes: a cut inside it moves back before it.
  CHECK(clip("abcdefghi\xc3\xa9xyz", 10) == "abcdefghi... (5 more bytes)");
  CHECK(clip(std::string(60'000'000, '\0')).size() < 300);
}

TEST_CASE("the locale's character set picks the report's marks") {
  CHECK(utf8_locale(nullptr, nullptr, "en_US.UTF-8"));
  CHECK(utf8_locale(nullptr, nullptr, "C.utf8"));
  CHECK_FALSE(utf8_locale(nullptr, nullptr, "C"));
  CHECK_FALSE(utf8_locale(nullptr, nullptr, nullptr));
  CHECK_FALSE(utf8_locale("", "", ""));
  // LC_ALL wins over LC_CTYPE, which wins over LANG; an empty one is unset.
  CHECK_FALSE(utf8_locale("POSIX", "en_US.UTF-8", "en_US.UTF-8"));
  CHECK(utf8_locale("", "de_DE.utf-8", "C"));
  CHECK_FALSE(utf8_locale(nullptr, "en_US.ISO-8859-1", "en_US.UTF-8"));
  CHECK(std::string(kAsciiMarks.ok) == "[ok]");
  CHECK(std::string(kAsciiMarks.bad) == "[x]");
}

TEST_CASE("PrintableLines: build output reaches the terminal escaped, line by line") {
  PrintableLines lines;
  // A chunk may end inside a line and inside a UTF-8 sequence: held, not mangled.
  CHECK(lines.feed("x.cu(3): warning \x1b[2J") == "");
  CHECK(lines.feed("\xe2\x80") == "");
  CHECK(lines.feed("\xae rlo \xc2\x9b"
                   "31m\nnext") == "x.cu(3): warning \\x1b[2J\\u202e rlo \\u009b31m\n");
  CHECK(lines.finish() == "next");
  std::ostringstream sink;
  {
    PrintableOstream out(sink);
    out << "row \x1b]0;title\x07 ok\n"
        << "caf\xc3\xa9";
  }
  CHECK(sink.str() == "row \\x1b]0;title\\x07 ok\ncaf\xc3\xa9");
  // A line without end is printed in bounded pieces.
  std::string flood(PrintableLines::kMaxHeldLine + 10, 'a');
  CHECK(lines.feed(flood).size() == flood.size());
}

TEST_CASE("ASCII whitespace and digits: the C locale's, nothing else") {
  for (char c : std::string(" \t\n\v\f\r")) CHECK(sb::is_ascii_space(c));
  CHECK_FALSE(sb::is_ascii_space('\0'));
  CHECK_FALSE(sb::is_ascii_space('\xa0'));  // a Latin-1 no-break space byte is not ASCII whitespace
  CHECK(sb::trim_ascii_space(" \t 1.0 \r\n") == "1.0");
  CHECK(sb::trim_ascii_space("\f\v") == "");
  CHECK(sb::trim_ascii_space("a b") == "a b");
  CHECK(sb::all_ascii_digits("0123456789"));
  CHECK_FALSE(sb::all_ascii_digits(""));
  CHECK_FALSE(sb::all_ascii_digits("12a"));
  CHECK_FALSE(sb::all_ascii_digits("\xd9\xa3"));  // ARABIC-INDIC DIGIT THREE is not an ASCII digit
}
