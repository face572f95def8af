// Random access (binary::ByteSource) to one member of a zip, so the ELF,
// PE and fatbin readers inspect a wheel's .so/.pyd without extracting it.
// STORED members are read in place.  DEFLATED members are decompressed
// forward through a fixed window; seeking backwards restarts from the
// member's start.  The first `head` bytes are kept once decompressed,
// because binary readers keep returning to the start (an ELF's header and
// its dynamic tables sit there while its section headers sit at the end).
// Memory stays one window plus the head whatever the member's size, at the
// price of re-inflating on other backward seeks: readers should visit
// offsets in ascending order where they can.
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
  // `file` (the archive) must outlive this source.
  MemberSource(binary::ByteSource& file, const Entry& entry, StreamLimits limits,
               std::size_t window = 256 * 1024, std::size_t head = 1024 * 1024);
  std::uint64_t size() const override { return entry_.uncompressed_size; }
  bool read(std::uint64_t offset, void* dst, std::size_t n) override;

  // Why the last read failed when the data itself is bad ("invalid deflate
  // data", a limit ...); empty when reads failed only for being out of range.
  const std::string& error() const { return error_; }
  // How many times decompression restarted from the start (for tests and
  // for callers tuning their access order).
  unsigned restarts() const { return restarts_; }

 private:
  bool advance();  // decompresses the next window
  void restart();
  std::size_t copy_from_head(std::uint64_t offset, std::uint8_t* out, std::size_t n) const;

  binary::ByteSource& file_;
  Entry entry_;
  StreamLimits limits_;
  std::size_t window_size_;
  std::size_t head_limit_;
  std::vector<std::uint8_t> head_;  // bytes [0, head_.size()) once seen
  std::unique_ptr<MemberStream> stream_;
  std::vector<std::uint8_t> window_;
  std::uint64_t window_start_ = 0;
  unsigned restarts_ = 0;
  std::string error_;
};

}  // namespace sb::zip
