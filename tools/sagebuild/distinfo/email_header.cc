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

static std::string_view trim(std::string_view s) {
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
// Splits text into lines (LF or CRLF), remembering where the rest starts.
struct LineCursor {
  std::string_view text;
  std::size_t pos = 0;
  int number = 0;
  bool next(std::string_view& line) {
    if (pos >= text.size()) return false;
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
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

EmailHeader parse_email_header(std::string_view text) {
  EmailHeader out;
  check_utf8_lines(text, out);
  LineCursor cur{text};
  std::string_view line;
  while (cur.next(line)) {
    if (trim(line).empty()) {  // end of the header block
      if (cur.pos < text.size()) out.body = std::string(text.substr(cur.pos));
      break;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      if (out.fields.empty()) {
        problem(out, cur.number, "continuation line before any field");
        continue;
      }
      auto& v = out.fields.back().value;
      v += '\n';
      v += trim(line);
      continue;
    }
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || !valid_field_name(line.substr(0, colon))) {
      problem(out, cur.number,
              "malformed line '" + std::string(line.substr(0, 60)) +
                  "' (expected 'Name: value' or an indented continuation)");
      continue;
    }
    if (out.fields.size() >= EmailHeader::kMaxFields) {
      ++out.fields_dropped;
      continue;
    }
    out.fields.push_back({std::string(line.substr(0, colon)), std::string(trim(line.substr(colon + 1))), cur.number});
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
