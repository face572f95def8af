#include "sagebuild/distinfo/email_header.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace sb::distinfo {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// A header value without its folding blanks: spaces and tabs in front, and a
// stray CR of a CRLF file behind.
static std::string_view trim_field_value(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A field name is printable ASCII other than ':' and space (RFC 5322 2.2).
static bool valid_field_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (c <= 32 || c >= 127 || c == ':') return false;
  return true;
}

namespace {
// Splits text into lines as Python's email parser does (io's universal
// newlines: LF, CRLF and a bare CR; nothing else), remembering where the
// rest starts.  A bare CR ends a line: "Name: x\rRequires-Dist: torch" is
// two fields to pip, so it is two fields here.
struct LineCursor {
  std::string_view text;
  std::size_t pos = 0;
  int number = 0;
  bool next(std::string_view& line) {
    if (pos >= text.size()) return false;
    std::size_t end = text.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) end = text.size();
    line = text.substr(pos, end - pos);
    if (end == text.size())
      pos = end;
    else
      pos = end + (end + 1 < text.size() && text[end] == '\r' && text[end + 1] == '\n' ? 2 : 1);
    ++number;
    return true;
  }
};
}  // namespace

static void problem(EmailHeader& out, int line, std::string message) {
  if (out.problems.size() < EmailHeader::kMaxProblems)
    out.problems.push_back({line, std::move(message)});
  else
    ++out.problems_dropped;
}

static void check_utf8_lines(std::string_view text, EmailHeader& out) {
  LineCursor cur{text};
  std::string_view line;
  while (cur.next(line)) {
    if (!is_valid_utf8(line)) {
      out.utf8 = false;
      problem(out, cur.number, "line is not valid UTF-8");
    }
  }
}

namespace {

enum class LineKind { end, continuation, field, nameless, envelope, malformed };

// What a header line is to Python's email.feedparser.
LineKind kind_of(std::string_view line) {
  if (line.empty()) return LineKind::end;
  if (line.front() == ' ' || line.front() == '\t') return LineKind::continuation;
  if (line.starts_with("From ")) return LineKind::envelope;
  std::size_t colon = line.find(':');
  if (colon == 0) return LineKind::nameless;
  if (colon == std::string_view::npos || !valid_field_name(line.substr(0, colon))) return LineKind::malformed;
  return LineKind::field;
}

}  // namespace

EmailHeader parse_email_header(std::string_view text) {
  EmailHeader out;
  check_utf8_lines(text, out);
  LineCursor cur{text};
  std::string_view line;
  // The header block ends as Python's email.feedparser ends it (the reading
  // pip and packaging share): at an empty line, or at the first line that is
  // neither a field nor a continuation, which starts the body.  A line of
  // blanks is a continuation, not the end.  A skipped line (no name, a mbox
  // "From ") ends the field before it: a continuation after it is dropped.
  std::size_t line_start = 0;
  bool in_field = false;
  int header_lines = 0;
  while ((line_start = cur.pos, cur.next(line))) {
    LineKind kind = kind_of(line);
    if (kind == LineKind::end) {
      if (cur.pos < text.size()) out.body = std::string(text.substr(cur.pos));
      break;
    }
    if (kind == LineKind::malformed) {
      problem(out, cur.number,
              "malformed line '" + clip(line, 60) +
                  "' ends the fields: pip reads it and everything after it as the description "
                  "(expected 'Name: value' or an indented continuation)");
      out.body = std::string(text.substr(line_start));
      break;
    }
    ++header_lines;
    if (kind == LineKind::continuation) {
      if (!in_field) {
        problem(out, cur.number, "continuation line without a field before it (pip drops it)");
        continue;
      }
      if (trim_field_value(line).empty()) continue;  // blanks: nothing to add
      auto& v = out.fields.back().value;
      v += '\n';
      v += trim_field_value(line);
      continue;
    }
    in_field = false;
    if (kind == LineKind::envelope && header_lines > 1) {
      // The last line of the fields: the parser gives it to the body, before
      // what follows the line that ended the fields.
      LineCursor peek = cur;
      std::string_view after;
      bool last = !peek.next(after) || kind_of(after) == LineKind::end || kind_of(after) == LineKind::malformed;
      if (last) {
        problem(out, cur.number, "a mbox 'From ' line ends the fields and starts the description");
        std::string rest;
        if (peek.number > cur.number && kind_of(after) == LineKind::end)
          rest = std::string(text.substr(peek.pos));
        else
          rest = std::string(text.substr(cur.pos));
        if (peek.number > cur.number && kind_of(after) == LineKind::malformed)
          problem(out, peek.number, "malformed line '" + clip(after, 60) + "' is part of the description");
        out.body = std::string(text.substr(line_start, cur.pos - line_start)) + rest;
        break;
      }
    }
    if (kind == LineKind::nameless || kind == LineKind::envelope) {  // the email parser skips these lines
      problem(out, cur.number,
              "line '" + clip(line, 60) + "' is " +
                  (kind == LineKind::nameless ? "a field without a name" : "a mbox 'From ' line") +
                  ", which pip skips (expected 'Name: value' or an indented continuation)");
      continue;
    }
    if (out.fields.size() >= EmailHeader::kMaxFields) {
      ++out.fields_dropped;
      continue;
    }
    std::size_t colon = line.find(':');
    out.fields.push_back(
        {std::string(line.substr(0, colon)), std::string(trim_field_value(line.substr(colon + 1))), cur.number});
    in_field = true;
  }
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const HeaderProblem& a, const HeaderProblem& b) { return a.line < b.line; });
  return out;
}

std::vector<std::string> EmailHeader::values(std::string_view name) const {
  std::vector<std::string> v;
  for (const auto& f : fields)
    if (iequals(f.name, name)) v.push_back(f.value);
  return v;
}

std::size_t EmailHeader::count(std::string_view name) const {
  std::size_t n = 0;
  for (const auto& f : fields) n += iequals(f.name, name);
  return n;
}

const HeaderField* EmailHeader::first(std::string_view name) const {
  for (const auto& f : fields)
    if (iequals(f.name, name)) return &f;
  return nullptr;
}

std::string write_email_header(const std::vector<std::pair<std::string, std::string>>& fields, std::string_view body) {
  std::string out;
  for (const auto& [name, value] : fields) {
    out += name;
    out += ": ";
    for (char c : value) {
      out += c;
      if (c == '\n') out += "        ";  // fold: continuation lines are indented
    }
    out += '\n';
  }
  if (!body.empty()) {
    out += '\n';
    out += body;
    if (body.back() != '\n') out += '\n';
  }
  return out;
}

}  // namespace sb::distinfo
