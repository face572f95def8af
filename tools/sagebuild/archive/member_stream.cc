#include "sagebuild/archive/member_stream.h"

#include <algorithm>
#include <cstring>

#include <libdeflate.h>
#include <zlib.h>

#include "sagebuild/archive/zip_format.h"

namespace sb::zip {

namespace {
constexpr std::size_t kInputChunk = 64 * 1024;
}  // namespace

struct MemberStream::Inflate {
  z_stream s{};
  bool ready = false;
  ~Inflate() {
    if (ready) inflateEnd(&s);
  }
};

MemberStream::MemberStream(binary::ByteSource& file, const Entry& entry, StreamLimits limits)
    : file_(file), entry_(entry), limits_(limits), crc_(crc32(0L, Z_NULL, 0)) {
  if (entry_.method == format::kDeflated) {
    z_ = std::make_unique<Inflate>();
    // windowBits -15: raw deflate, as zip stores it (no zlib header).
    if (inflateInit2(&z_->s, -15) != Z_OK) fail("zlib inflateInit2 failed");
    z_->ready = !failed();
  } else if (entry_.method != format::kStored) {
    fail("unsupported compression method " + std::to_string(entry_.method));
  }
  if (!binary::in_bounds(entry_.data_offset, entry_.compressed_size, file_.size()))
    fail("member data runs past the end of the file");
}

MemberStream::~MemberStream() = default;

std::unique_ptr<MemberStream> MemberStream::clone() const {
  auto c = std::make_unique<MemberStream>(file_, entry_, limits_);
  c->produced_ = produced_;
  c->crc_ = crc_;
  c->done_ = done_;
  c->hit_limit_ = hit_limit_;
  c->error_ = error_;
  c->consumed_ = consumed_;
  if (z_ && z_->ready && c->z_ && c->z_->ready) {
    inflateEnd(&c->z_->s);
    c->z_->ready = false;
    if (inflateCopy(&c->z_->s, const_cast<z_stream*>(&z_->s)) != Z_OK) {
      c->fail("zlib inflateCopy failed");
      return c;
    }
    c->z_->ready = true;
    // Input buffered here but not yet consumed is read again by the copy.
    c->consumed_ -= z_->s.avail_in;
    c->z_->s.next_in = nullptr;
    c->z_->s.avail_in = 0;
  }
  return c;
}

void MemberStream::fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
}

std::size_t MemberStream::next(std::uint8_t* out, std::size_t cap) {
  if (done_ || failed() || cap == 0) return 0;
  std::size_t n = entry_.method == format::kStored ? next_stored(out, cap) : next_deflated(out, cap);
  if (failed()) return 0;
  account(out, n);
  if (failed()) return 0;
  if (done_) finish();
  return failed() ? 0 : n;
}

std::size_t MemberStream::next_stored(std::uint8_t* out, std::size_t cap) {
  std::uint64_t left = entry_.compressed_size - consumed_;
  auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, cap));
  if (n && !file_.read(entry_.data_offset + consumed_, out, n)) {
    fail("cannot read member data");
    return 0;
  }
  consumed_ += n;
  done_ = consumed_ == entry_.compressed_size;
  return n;
}

bool MemberStream::refill() {
  std::uint64_t left = entry_.compressed_size - consumed_;
  auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kInputChunk));
  if (n == 0) return false;
  in_.resize(n);
  if (!file_.read(entry_.data_offset + consumed_, in_.data(), n)) {
    fail("cannot read member data");
    return false;
  }
  consumed_ += n;
  z_->s.next_in = in_.data();
  z_->s.avail_in = static_cast<uInt>(n);
  return true;
}

std::size_t MemberStream::next_deflated(std::uint8_t* out, std::size_t cap) {
  z_stream& s = z_->s;
  s.next_out = out;
  s.avail_out = static_cast<uInt>(std::min<std::size_t>(cap, 1u << 30));
  std::size_t want = s.avail_out;
  while (s.avail_out > 0) {
    // At the end of the input inflate may still hold output (a stream whose
    // last block fits the input exactly, as Python's zipfile writes them):
    // it is truncated only when inflate, given no more input, makes no
    // progress.
    bool more_input = s.avail_in > 0 || refill();
    if (failed()) return 0;
    uInt out_before = s.avail_out;
    int rc = inflate(&s, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      if (s.avail_in != 0 || consumed_ != entry_.compressed_size)
        fail("deflate stream ends " + std::to_string(s.avail_in + entry_.compressed_size - consumed_) +
             " bytes before the declared compressed size");
      done_ = true;
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      fail(std::string("invalid deflate data: ") + (s.msg ? s.msg : "zlib error " + std::to_string(rc)));
      return 0;
    }
    if (!more_input && s.avail_out == out_before) {
      fail("truncated deflate data: the compressed size ends before the stream does");
      return 0;
    }
  }
  return want - s.avail_out;
}

void MemberStream::account(const std::uint8_t* data, std::size_t n) {
  produced_ += n;
  // libdeflate's CRC-32 folds with PCLMULQDQ where the CPU has it: several
  // times zlib's speed, which keeps verify's one-core throughput near SHA-256's.
  if (n) crc_ = libdeflate_crc32(crc_, data, n);
  if (produced_ > entry_.uncompressed_size)
    fail("member produces more than its declared " + std::to_string(entry_.uncompressed_size) + " bytes");
  else {
    bool ratio = produced_ > limits_.ratio_applies_above &&
                 double(produced_) > limits_.max_ratio * double(std::max<std::uint64_t>(consumed_, 1));
    if (ratio || produced_ > limits_.max_bytes) {
      hit_limit_ = true;
      // The ratio, when it is over too, says more than the size.
      fail(ratio ? "compression ratio above " + std::to_string(std::uint64_t(limits_.max_ratio)) + " after " +
                       std::to_string(produced_) + " bytes"
                 : "member exceeds the size limit of " + std::to_string(limits_.max_bytes) + " bytes");
    }
  }
}

void MemberStream::finish() {
  if (produced_ != entry_.uncompressed_size)
    fail("member holds " + std::to_string(produced_) + " bytes, declared " + std::to_string(entry_.uncompressed_size));
  else if (crc_ != entry_.crc32)
    fail("CRC-32 mismatch: computed " + std::to_string(crc_) + ", declared " + std::to_string(entry_.crc32));
}

}  // namespace sb::zip
