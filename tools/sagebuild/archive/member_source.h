// Random access (binary::ByteSource) to one member of a zip, so the ELF,
// PE and fatbin readers inspect a wheel's .so/.pyd without extracting it.
// STORED members are read in place.  DEFLATED members are decompressed
// forward through a fixed window.  The first `head` bytes are kept once
// decompressed, because binary readers keep returning to the start (an ELF's
// header and its dynamic tables sit there while its section headers sit at
// the end).  Going backwards resumes from the nearest checkpoint, a copy of
// the decompressor's state taken at most every size/64 bytes (at least every
// 1 MiB), instead of from the member's start.
//
// Memory stays one window, the head and at most kMaxCheckpoints copies of
// zlib's state (about 40 KiB each) whatever the member's size.  Time is
// bounded too: a source decompresses at most kBudgetFactor times the
// member's size (plus kBudgetSlack) over its life; an access pattern that
// would need more (a hostile file's tables at alternating ends, each read
// a backward seek) makes reads fail with error() saying so, instead of
// running for minutes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sagebuild/archive/member_stream.h"
#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/binary/byte_source.h"

namespace sb::zip {

class MemberSource final : public binary::ByteSource {
 public:
  static constexpr std::size_t kMaxCheckpoints = 64;
  static constexpr std::uint64_t kMinCheckpointSpacing = 1ull << 20;
  static constexpr std::uint64_t kBudgetFactor = 8;
  static constexpr std::uint64_t kBudgetSlack = 64ull << 20;

  // `file` (the archive) must outlive this source.
  MemberSource(binary::ByteSource& file, const Entry& entry, StreamLimits limits, std::size_t window = 256 * 1024,
               std::size_t head = 1024 * 1024);
  std::uint64_t size() const override { return entry_.uncompressed_size; }
  bool read(std::uint64_t offset, void* dst, std::size_t n) override;

  // Why the last read failed when the data itself is bad ("invalid deflate
  // data", a limit, the decompression budget); empty when reads failed only
  // for being out of range.
  const std::string& error() const { return error_; }
  // Backward seeks that resumed decompression (from a checkpoint or the
  // start), and the bytes decompressed so far: for tests, and for callers
  // tuning their access order.
  unsigned restarts() const { return restarts_; }
  std::uint64_t inflated() const { return inflated_; }
  std::uint64_t budget() const { return budget_; }

 private:
  struct Checkpoint {
    std::uint64_t offset;  // output offset the saved stream goes on from
    std::unique_ptr<MemberStream> stream;
  };
  bool advance();  // decompresses the next window
  void resume_before(std::uint64_t offset);
  void maybe_checkpoint();
  std::size_t copy_from_head(std::uint64_t offset, std::uint8_t* out, std::size_t n) const;

  binary::ByteSource& file_;
  Entry entry_;
  StreamLimits limits_;
  std::size_t window_size_;
  std::size_t head_limit_;
  std::uint64_t spacing_;
  std::uint64_t budget_;
  std::uint64_t inflated_ = 0;
  std::vector<std::uint8_t> head_;  // bytes [0, head_.size()) once seen
  std::unique_ptr<MemberStream> stream_;
  std::vector<std::uint8_t> window_;
  std::uint64_t window_start_ = 0;
  std::vector<Checkpoint> checkpoints_;  // ascending offsets
  unsigned restarts_ = 0;
  std::string error_;
};

}  // namespace sb::zip
