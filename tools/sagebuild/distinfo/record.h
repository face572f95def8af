// RECORD: the wheel's manifest of files, hashes and sizes (BDF ".dist-info",
// RIP).  The format is Python's csv default dialect: ',' delimiter, '"'
// quoting with doubled quotes inside, CRLF or LF line ends, 3 fields a row.
//
// This unit parses and writes RECORD and checks what can be checked from the
// text and the archive's member list (R1-R4, R6-R8, the syntax half of R5).
// Comparing digests with content needs the member data: see
// verify/record_hashing.h, which streams it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/finding.h"

namespace sb::distinfo {

struct RecordRow {
  std::string path;
  std::string hash;  // "algo=digest", or empty
  std::string size;  // decimal text, or empty
  int line = 0;      // 1-based line the row starts on
};

struct RecordParse {
  std::vector<RecordRow> rows;
  Findings findings;  // R2: malformed csv, wrong field counts
};

// Parses RECORD text; `member` names the RECORD member in findings.  Rows
// past `max_rows` are not kept (one R2 finding says how many were skipped):
// a wheel's RECORD can list at most one row per member.
RecordParse parse_record(std::string_view text, std::string_view member, std::size_t max_rows = 1'000'000);

// A parsed `algo=digest` hash field.
struct RecordHash {
  std::string algo;     // lowercase as written ("sha256")
  std::string digest;   // raw digest bytes
  bool padded = false;  // the text carried '=' padding (accepted by pip, not installer)
};

// Hash algorithms RECORD may use: hashlib's guaranteed ones of at least
// SHA-256 strength.  md5 and sha1 are forbidden (weak); anything else is unknown.
bool is_allowed_record_algorithm(std::string_view algo);
std::size_t digest_size(std::string_view algo);  // 0 for unknown algorithms

// Parses and checks one row's hash field (R4, R5 syntax).  Returns the hash
// when it is usable for comparing content, adding findings otherwise.
std::optional<RecordHash> check_row_hash(const RecordRow& row, Findings& out);

// What the archive holds, for the cross-checks.
struct ArchiveListing {
  std::vector<std::string_view> files;  // member names, directories excluded (views: 200k names)
  std::string record_path;              // "<dist-info>/RECORD"
};

// R3 (listed vs present), R4/R5 syntax, R6, R7, R8.
Findings check_record(const std::vector<RecordRow>& rows, const ArchiveListing& archive);

// Writes RECORD rows in the given order: `path,sha256=<b64>,<size>` with the
// csv quoting Python would apply, LF line ends.  Rows with empty hash and
// size (RECORD's own) are written as `path,,`.
std::string write_record(const std::vector<RecordRow>& rows);

// Quotes one csv field the way Python's csv.writer (QUOTE_MINIMAL) does.
std::string csv_field(std::string_view field);

}  // namespace sb::distinfo
