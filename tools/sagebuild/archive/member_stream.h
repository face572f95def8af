// Streams one member's uncompressed bytes out of its compressed range:
// STORED is copied, DEFLATED goes through zlib's raw inflate.  The CRC-32
// and sizes are checked as the bytes go by, and limits are enforced on the
// bytes actually produced, never on the sizes the archive declares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/binary/byte_source.h"

namespace sb::zip {

struct StreamLimits {
  std::uint64_t max_bytes = ~0ull;            // stop with an error past this many bytes
  double max_ratio = 50.0;                    // ... or past this ratio,
  std::uint64_t ratio_applies_above = ~0ull;  // once this many bytes are out
};

class MemberStream {
 public:
  MemberStream(binary::ByteSource& file, const Entry& entry, StreamLimits limits);
  ~MemberStream();
  MemberStream(const MemberStream&) = delete;  // clone() copies zlib's state properly
  MemberStream& operator=(const MemberStream&) = delete;

  // Writes up to `cap` bytes to `out` and returns how many.  Returns 0 once
  // done() or failed(); when the last bytes come out, the CRC-32 and sizes
  // are checked and a mismatch makes the stream failed().
  std::size_t next(std::uint8_t* out, std::size_t cap);

  // A copy of this stream's state (zlib's included) that goes on from the
  // same output offset: MemberSource's checkpoints.  The copy re-reads from
  // the file any input this one had buffered but not consumed.
  std::unique_ptr<MemberStream> clone() const;

  bool done() const { return done_; }
  bool failed() const { return !error_.empty(); }
  // True when the failure is a limit (size, ratio) rather than bad data.
  bool hit_limit() const { return hit_limit_; }
  const std::string& error() const { return error_; }
  std::uint64_t produced() const { return produced_; }

 private:
  std::size_t next_stored(std::uint8_t* out, std::size_t cap);
  std::size_t next_deflated(std::uint8_t* out, std::size_t cap);
  bool refill();
  void account(const std::uint8_t* data, std::size_t n);
  void finish();
  void fail(std::string why);

  binary::ByteSource& file_;
  Entry entry_;
  StreamLimits limits_;
  struct Inflate;
  std::unique_ptr<Inflate> z_;
  std::vector<std::uint8_t> in_;
  std::uint64_t consumed_ = 0;  // compressed bytes read from the file
  std::uint64_t produced_ = 0;
  std::uint32_t crc_ = 0;
  bool done_ = false;
  bool hit_limit_ = false;
  std::string error_;
};

}  // namespace sb::zip
