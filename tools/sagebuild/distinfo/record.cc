#include "sagebuild/distinfo/record.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "sagebuild/common/hash.h"
#include "sagebuild/common/text.h"

namespace sb::distinfo {

namespace {

// A csv reader for the default dialect, one row at a time.  Quoted fields may
// span lines; a quote inside an unquoted field is kept literally (as Python does).
class CsvReader {
 public:
  explicit CsvReader(std::string_view text) : text_(text) {}

  // Reads the next row; false at end of input.  `error` is set on a
  // malformed row (e.g. an unterminated quote).
  bool next(std::vector<std::string>& fields, int& line, std::string& error) {
    fields.clear();
    error.clear();
    if (pos_ >= text_.size()) return false;
    line = line_;
    std::string field;
    bool quoted = false, in_quotes = false, after_quote = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (in_quotes) {
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            field += '"';
            ++pos_;
          } else {
            in_quotes = false;
            after_quote = true;
          }
        } else {
          if (c == '\n') ++line_;
          field += c;
        }
        continue;
      }
      if (c == ',') {
        fields.push_back(std::move(field));
        field.clear();
        quoted = after_quote = false;
        continue;
      }
      if (c == '\r' || c == '\n') {
        if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
        ++line_;
        fields.push_back(std::move(field));
        return true;
      }
      if (c == '"' && field.empty() && !quoted) {
        quoted = in_quotes = true;
        continue;
      }
      if (after_quote && error.empty()) error = "character after a closing quote (expected ',' or end of line)";
      field += c;
    }
    if (in_quotes) error = "unterminated quoted field (expected a closing '\"')";
    fields.push_back(std::move(field));
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

bool is_decimal(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

RecordParse parse_record(std::string_view text, std::string_view member, std::size_t max_rows) {
  RecordParse out;
  CsvReader reader(text);
  std::vector<std::string> fields;
  int line = 0;
  std::string error;
  std::size_t skipped = 0;
  while (reader.next(fields, line, error)) {
    auto where = [&] { return std::string(member) + ":" + std::to_string(line); };
    if (!error.empty() && !out.findings.skip("R2", Severity::Error))
      add(out.findings, "R2", Severity::Error, std::string(member), where() + ": " + error);
    if (fields.size() == 1 && fields[0].empty()) continue;  // blank line: csv yields no row
    if (out.rows.size() >= max_rows) {
      ++skipped;
      continue;
    }
    if (fields.size() != 3 && !out.findings.skip("R2", Severity::Error)) {
      add(out.findings, "R2", Severity::Error, std::string(member),
          where() + ": row has " + std::to_string(fields.size()) + " fields",
          "exactly 3 fields: path,algo=digest,size");
    }
    if (fields.size() != 3) {
      if (fields.size() < 1 || fields[0].empty()) continue;
      fields.resize(3);  // keep the path so R3 does not double-report it
    }
    out.rows.push_back({std::move(fields[0]), std::move(fields[1]), std::move(fields[2]), line});
  }
  if (skipped)
    add(out.findings, "R2", Severity::Error, std::string(member),
        std::to_string(skipped) + " rows after the first " + std::to_string(max_rows) + " were not checked",
        "at most one row per archive member");
  return out;
}

bool is_allowed_record_algorithm(std::string_view algo) {
  return algo == "sha256" || algo == "sha384" || algo == "sha512" || algo == "sha3_256" || algo == "sha3_384" ||
         algo == "sha3_512" || algo == "blake2b";
}

std::size_t digest_size(std::string_view algo) {
  if (algo == "sha256" || algo == "sha3_256") return 32;
  if (algo == "sha384" || algo == "sha3_384") return 48;
  if (algo == "sha512" || algo == "sha3_512" || algo == "blake2b") return 64;
  return 0;
}

std::optional<RecordHash> check_row_hash(const RecordRow& row, Findings& out) {
  std::string where = "RECORD line " + std::to_string(row.line) + " for '" + clip(row.path) + "'";
  std::size_t eq = row.hash.find('=');
  if (row.hash.empty() || eq == std::string::npos || eq == 0) {
    add(out, "R4", Severity::Error, row.path, where + ": hash '" + clip(row.hash) + "' has no algorithm",
        "algo=urlsafe-b64-digest, e.g. sha256=...");
    return std::nullopt;
  }
  RecordHash h;
  h.algo = row.hash.substr(0, eq);
  std::string_view text = std::string_view(row.hash).substr(eq + 1);
  if (h.algo == "md5" || h.algo == "sha1" || h.algo == "sha224") {
    add(out, "R4", Severity::Error, row.path, where + ": weak hash algorithm '" + h.algo + "'",
        "sha256, sha384 or sha512");
    return std::nullopt;
  }
  if (!is_allowed_record_algorithm(h.algo)) {
    add(out, "R4", Severity::Error, row.path, where + ": unknown hash algorithm '" + clip(h.algo) + "'",
        "sha256, sha384 or sha512");
    return std::nullopt;
  }
  while (!text.empty() && text.back() == '=') {
    text.remove_suffix(1);
    h.padded = true;
  }
  if (!decode_urlsafe_b64_nopad(text, h.digest) || h.digest.size() != digest_size(h.algo)) {
    add(out, "R5", Severity::Error, row.path,
        where + ": digest '" + clip(text) + "' is not a urlsafe-base64 " + h.algo + " digest",
        std::to_string(digest_size(h.algo)) + " bytes, urlsafe base64 without padding");
    return std::nullopt;
  }
  if (h.padded)
    add(out, "R5", Severity::Strict, row.path, where + ": digest carries '=' padding",
        "urlsafe base64 with the padding stripped");
  return h;
}

// R7: relative, '/'-separated, no '..'.
static void check_row_path(const RecordRow& row, Findings& out) {
  const std::string& p = row.path;
  std::string where = "RECORD line " + std::to_string(row.line);
  bool absolute = p.front() == '/' || (p.size() >= 2 && p[1] == ':');
  bool backslash = p.find('\\') != std::string::npos;
  bool dotdot = false;
  for (std::size_t start = 0; start <= p.size();) {
    std::size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    if (p.compare(start, end - start, "..") == 0) dotdot = true;
    start = end + 1;
  }
  if (absolute || backslash || dotdot)
    add(out, "R7", Severity::Error, p,
        where + ": path '" + clip(p) + "' is " +
            (absolute    ? "absolute"
             : backslash ? "using '\\'"
                         : "escaping with '..'"),
        "a relative path with '/' separators and no '..'");
}

static bool is_signature_file(std::string_view path, std::string_view record_path) {
  return path == std::string(record_path) + ".jws" || path == std::string(record_path) + ".p7s";
}

// R6: RECORD's own row carries neither hash nor size.
static void check_self_row(const RecordRow& row, Findings& out) {
  if (!row.hash.empty() || !row.size.empty())
    add(out, "R6", Severity::Error, row.path,
        "RECORD's own row has hash '" + clip(row.hash) + "' and size '" + clip(row.size) + "'",
        "empty hash and size: 'RECORD,,'");
}

static void check_row_size(const RecordRow& row, Findings& out) {
  if (!is_decimal(row.size))
    add(out, "R5", Severity::Error, row.path,
        "RECORD line " + std::to_string(row.line) + ": size '" + clip(row.size) + "' is not a decimal integer",
        "the uncompressed size in bytes");
}

Findings check_record(const std::vector<RecordRow>& rows, const ArchiveListing& archive) {
  Findings out;
  // Views into `rows` and `archive`: RECORD may be tens of megabytes.
  std::unordered_set<std::string_view> present(archive.files.begin(), archive.files.end());
  std::unordered_set<std::string_view> listed;
  for (const auto& row : rows) {
    if (row.path.empty()) continue;
    if (!listed.insert(row.path).second) {
      add(out, "R7", Severity::Error, row.path,
          "RECORD line " + std::to_string(row.line) + ": duplicate row for '" + clip(row.path) + "'",
          "one row per file");
      continue;
    }
    check_row_path(row, out);
    if (row.path.back() == '/') {
      add(out, "R8", Severity::Warning, row.path, "RECORD lists directory '" + clip(row.path) + "'", "files only");
      continue;
    }
    if (row.path == archive.record_path) {
      check_self_row(row, out);
      continue;
    }
    if (is_signature_file(row.path, archive.record_path)) {
      add(out, "D9", Severity::Error, row.path, "RECORD lists the signature file '" + clip(row.path) + "'",
          "RECORD.jws/.p7s left out of RECORD");
    }
    if (!present.count(row.path))
      add(out, "R3", Severity::Error, row.path, "RECORD lists '" + clip(row.path) + "', which is not in the archive",
          "rows only for files present");
    check_row_hash(row, out);
    if (!row.hash.empty()) check_row_size(row, out);  // a row without hash: R4 already says so
  }
  for (const auto& f : archive.files) {
    if (listed.count(f) || is_signature_file(f, archive.record_path)) continue;
    if (out.skip("R3", Severity::Error)) continue;
    add(out, "R3", Severity::Error, std::string(f), "archive member '" + clip(f) + "' is not listed in RECORD",
        "every file listed (RECORD itself included)");
  }
  return out;
}

std::string csv_field(std::string_view field) {
  // QUOTE_MINIMAL: only fields holding the delimiter, the quote or a line end.
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string write_record(const std::vector<RecordRow>& rows) {
  std::string out;
  for (const auto& r : rows) {
    out += csv_field(r.path);
    out += ',';
    out += csv_field(r.hash);
    out += ',';
    out += csv_field(r.size);
    out += '\n';
  }
  return out;
}

}  // namespace sb::distinfo
