// RECORD: the csv parser, the row checks against a member list taken from
// the same input (so rows and members overlap), and every row's hash field.
#include "sagebuild/distinfo/record.h"
#include "sagebuild/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  auto parsed = distinfo::parse_record(fuzz::bytes(data, size), "pkg-1.0.dist-info/RECORD", 4096);
  fuzz::check_bounded(parsed.findings);
  distinfo::ArchiveListing listing{{}, "pkg-1.0.dist-info/RECORD"};
  for (std::size_t i = 0; i < parsed.rows.size(); i += 2) listing.files.push_back(parsed.rows[i].path);
  listing.files.push_back("pkg/unlisted.py");
  Findings checked = distinfo::check_record(parsed.rows, listing);
  fuzz::check_bounded(checked);
  Findings hashes;
  for (const auto& row : parsed.rows) distinfo::check_row_hash(row, hashes);
  fuzz::check_bounded(hashes);
  std::string written = distinfo::write_record(parsed.rows);
  (void)written;
  return 0;
}
