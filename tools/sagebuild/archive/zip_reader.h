// A strict, hostile-input-safe reader of ZIP archives (wheels).
//
// It parses the End Of Central Directory record, the central directory and
// every local header itself (no library reports the structural problems a
// strict verifier needs), and streams member data through zlib's inflate with
// CRC-32 checks.  Memory stays bounded whatever the archive's size: nothing
// reads a whole member unless asked for a small one with a size cap.
// It never writes to disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/common/finding.h"

namespace sb::zip {

struct Limits {
  std::uint64_t max_members = 200'000;
  std::uint64_t max_total_uncompressed = 16ull << 30;  // 16 GiB over all members
  std::uint64_t max_member_uncompressed = 8ull << 30;  // 8 GiB per member
  // PyPI: reject ratio > 50 when the decompressed size is over 64 MiB (Z5).
  double max_ratio = 50.0;
  std::uint64_t ratio_applies_above = 64ull << 20;
  // The central directory is parsed in memory; a larger one is refused (Z1)
  // instead of allocated.  200k members with 100-byte names take 30 MB.
  std::uint64_t max_central_directory_bytes = 64ull << 20;
  // Member names are copied a few times by the checks (layout, RECORD,
  // binaries), so their sum is capped too: 16 MiB is 80 bytes for each of
  // 200k members.
  std::uint64_t max_name_bytes = 16ull << 20;
};

struct Entry {
  std::string name;          // as stored (bytes; validity is checked, not assumed)
  std::uint16_t method = 0;  // 0 stored, 8 deflated, others unsupported
  std::uint16_t flags = 0;   // general purpose bit flag
  std::uint32_t crc32 = 0;   // from the central directory
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint64_t local_header_offset = 0;
  std::uint64_t data_offset = 0;  // first byte of the member's data
  std::uint32_t external_attr = 0;
  std::uint8_t made_by_os = 0;  // high byte of "version made by" (3 = Unix)
  bool is_directory() const { return !name.empty() && name.back() == '/'; }
  bool is_symlink() const;  // Unix S_IFLNK in external_attr
  bool is_encrypted() const { return flags & 1u; }
  std::uint32_t unix_mode() const { return external_attr >> 16; }
};

// Called with successive chunks of a member's uncompressed data.
// Return false to stop early (the read then reports "stopped", not an error).
using Sink = std::function<bool(const std::uint8_t* data, std::size_t size)>;

struct ReadResult {
  bool ok = false;          // data decompressed, sizes and CRC-32 matched
  bool stopped = false;     // the sink asked to stop
  std::uint64_t bytes = 0;  // uncompressed bytes delivered
  std::string error;        // why not ok ("CRC-32 mismatch", "invalid deflate data", ...)
};

class Reader {
 public:
  // Opens and parses the structure.  Structural problems become findings
  // (rules Z1..Z10; see docs/verify-rules.md) rather than exceptions, so one call
  // reports everything; usable() says whether members can be read at all.
  // Throws IoError only when the file cannot be opened or read.
  static std::unique_ptr<Reader> open(const std::filesystem::path& path, Limits limits = {});
  // The same over bytes from anywhere (a buffer: the fuzz harnesses).
  static std::unique_ptr<Reader> open(std::unique_ptr<binary::ByteSource> source, Limits limits = {});

  virtual ~Reader() = default;
  virtual bool usable() const = 0;                        // central directory parsed
  virtual const std::vector<Entry>& entries() const = 0;  // central-directory order
  virtual const Findings& findings() const = 0;           // structural findings so far
  virtual std::uint64_t file_size() const = 0;

  // Streams member `index`, verifying its CRC-32 and sizes, enforcing Limits.
  virtual ReadResult read(std::size_t index, const Sink& sink) = 0;

  // Reads a small member whole (METADATA, WHEEL, RECORD ...).  Fails (returns
  // false, with `error`) if it would exceed max_bytes.
  virtual bool read_small(std::size_t index, std::uint64_t max_bytes, std::string& out, std::string& error) = 0;

  // Index of the first entry with exactly this name, or -1.
  virtual long find(std::string_view name) const = 0;

  // Random access to member `index` (see member_source.h), for the binary
  // readers.  Valid while this Reader lives.  Returns nullptr, with `error`,
  // for members read() would refuse.  Readers that cannot (test fakes) keep
  // this default.
  virtual std::unique_ptr<binary::ByteSource> open_member(std::size_t index, std::string& error) {
    error = "this reader does not support random access to members";
    return nullptr;
  }
};

}  // namespace sb::zip
