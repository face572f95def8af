// Runs the reader over every archive in the shared corpus (PyPI's zip
// suite, the malo corpus, and every wheel) and compares our Z-level verdict
// with MANIFEST.tsv.  A verdict is "reject" when any Z finding is Strict or
// Error, including those from reading every member.
//
// Expected verdicts: a row's strict_rules decide when they name a Z rule or
// the row is a wheel; otherwise (zipdata rows carry no strict rules) the
// upstream verdict does: only "valid" accepts.  malo's README says a
// security-minded decoder accepts only `accept`, so iffy and malicious are
// expected to be rejected.
#include <catch2/catch.hpp>

#include "sagebuild/common/corpus_test.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/common/error.h"

namespace {

namespace fs = std::filesystem;
const fs::path kCorpus = SAGEBUILD_CORPUS_DIR;

struct Row {
  std::string path, kind, upstream_verdict, strict_rules;
};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> cols;
  std::stringstream ss(line);
  std::string col;
  while (std::getline(ss, col, '\t')) cols.push_back(col);
  return cols;
}

std::vector<Row> manifest() {
  std::ifstream in(kCorpus / "MANIFEST.tsv");
  std::vector<Row> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    auto c = split_tabs(line);
    c.resize(9);
    rows.push_back({c[0], c[1], c[3], c[6]});
  }
  return rows;
}

bool has_blocking_z(const std::string& rules) {
  std::stringstream ss(rules);
  std::string r;
  while (ss >> r)
    if ((r.rfind("E:Z", 0) == 0 || r.rfind("S:Z", 0) == 0)) return true;
  return false;
}

bool expected_reject(const Row& row) {
  if (row.kind == "wheel" || has_blocking_z(row.strict_rules)) return has_blocking_z(row.strict_rules);
  return row.upstream_verdict != "valid";
}

struct Outcome {
  bool reject = false;
  std::string summary;  // the blocking findings, for failure messages
};

Outcome run_reader(const fs::path& file) {
  Outcome o;
  auto reader = sb::zip::Reader::open(file);
  if (reader->usable())
    for (std::size_t i = 0; i < reader->entries().size(); ++i)
      reader->read(i, [](const std::uint8_t*, std::size_t) { return true; });
  for (const auto& f : reader->findings())
    if (f.rule[0] == 'Z' && f.severity != sb::Severity::Warning) {
      o.reject = true;
      o.summary += " [" + f.rule + " " + f.member + ": " + f.message + "]";
    }
  return o;
}

// Where our strict reading and the corpus's expectation part, and why.
// Each entry must still disagree: a fixed one fails the test until removed.
const std::map<std::string, std::string> kKnownDisagreements = {
    // malo `iffy` files that are valid zips with nothing docs/verify-rules.md forbids:
    // they target readers that deduplicate by CRC-32 or trust a CRC of 0.
    // We check every CRC against the data, so they are unambiguous for us.
    {"zipdata/malo/zip/iffy/crc_collision_empty_nonempty.zip",
     "two members share a CRC-32; legal, and each CRC matches its data"},
    {"zipdata/malo/zip/iffy/crc_collision_two_nonempty.zip",
     "two members share a CRC-32; legal, and each CRC matches its data"},
    {"zipdata/malo/zip/iffy/crc_zero_nonempty.zip", "a non-empty member whose CRC-32 is really 0; legal and verified"},
    {"zipdata/malo/zip/iffy/nosubdir.zip",
     "a member without a directory entry for its parent; wheels never have directory "
     "entries, and PyPI accepts the same file (warehouse/accept/nosubdir.zip)"},
    // Rule Z4 (docs/verify-rules.md) makes data descriptors a warning (legal zip; malo
    // accepts the same bytes as accept/data_descriptor*.zip); PyPI rejects.
    {"zipdata/warehouse/reject/data_descriptor.zip",
     "Z4 is W: a well-formed data descriptor is legal zip (malo: accept)"},
    {"zipdata/warehouse/reject/data_descriptor_zip64.zip",
     "Z4 is W: a well-formed ZIP64 data descriptor is legal zip (malo: accept)"},
    // PyPI accepts these (it never decompresses), malo calls the same bytes
    // malicious: the data inflates to more than the declared size.  Z2 says
    // sizes must match the data, so we side with malo.
    {"zipdata/warehouse/accept/short_usize.zip",
     "Z2: data inflates past the declared uncompressed size (malo: malicious)"},
    {"zipdata/warehouse/accept/short_usize_zip64.zip",
     "Z2: data inflates past the declared size, and a ZIP64 extra with values for "
     "fields not marked 0xFFFFFFFF (malo: malicious)"},
};

}  // namespace

TEST_CASE("the reader's Z verdict agrees with MANIFEST for every corpus archive", "[corpus]") {
  SB_SKIP_WITHOUT_CORPUS();
  auto rows = manifest();
  REQUIRE(rows.size() > 200);
  int checked = 0;
  for (const Row& row : rows) {
    if (row.kind != "zip" && row.kind != "wheel") continue;
    fs::path file = kCorpus / row.path;
    REQUIRE(fs::exists(file));
    Outcome got = run_reader(file);
    bool want = expected_reject(row);
    bool known = kKnownDisagreements.count(row.path) > 0;
    INFO(row.path << ": expected " << (want ? "reject" : "accept") << ", got " << (got.reject ? "reject" : "accept")
                  << got.summary);
    CHECK((got.reject != want) == known);
    ++checked;
  }
  CHECK(checked == 252);  // 123 zip + 129 wheel rows
}
