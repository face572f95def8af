// The reader's structural passes, one per file, over a ByteSource:
//   zip_end_record.cc  EOCD and ZIP64 end records (Z1)
//   zip_central.cc     central-directory headers and their extra fields
//   zip_local.cc       local headers, data descriptors, member layout
// Internal to the archive module (zip_reader.cc wires them together).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/binary/byte_source.h"
#include "sagebuild/common/finding.h"

namespace sb::zip::detail {

struct EndRecord {
  std::uint64_t eocd_offset = 0;    // where the EOCD record starts
  std::uint64_t directory_end = 0;  // where the central directory must end
  std::uint64_t cd_offset = 0;
  std::uint64_t cd_size = 0;
  std::uint64_t entries = 0;
  bool zip64 = false;
};

// Finds the one EOCD (and its ZIP64 record).  Returns false, with a Z1
// error, when no central directory can be located at all.
bool find_end_record(binary::ByteSource& file, EndRecord& end, Findings& out);

// What the reader remembers per entry beyond the public Entry.
struct EntryState {
  std::string refuse;  // why read() must refuse this member; empty when readable
};

// Parses `end.entries` central headers.  Returns false when the directory
// cannot be trusted at all (nothing is readable then).
bool parse_central_directory(binary::ByteSource& file, const EndRecord& end, const Limits& limits,
                             std::vector<Entry>& entries, std::vector<EntryState>& states, Findings& out);

// Checks every entry's local header against its central header, sets
// Entry::data_offset, and checks that the members, the central directory
// and the end records tile the file with no gaps and no overlaps.
void check_local_headers(binary::ByteSource& file, const EndRecord& end, std::vector<Entry>& entries,
                         std::vector<EntryState>& states, Findings& out);

// Walks the extra-field area; shared by central and local headers.
struct ExtraField {
  std::uint16_t id = 0;
  std::uint64_t offset = 0;  // of the payload, inside the area
  std::uint16_t size = 0;
};
// Returns false (with a finding) when a field overruns the area.
bool split_extra(const std::uint8_t* area, std::size_t size, const std::string& member, const char* where,
                 std::vector<ExtraField>& fields, Findings& out);

// Info-ZIP unicode-path field (0x7075) payload against the header name (Z6).
void check_unicode_path(const std::uint8_t* payload, std::uint16_t size, const Entry& e, Findings& out);

}  // namespace sb::zip::detail
