#include "sagebuild/archive/member_source.h"

#include <algorithm>
#include <cstring>

#include "sagebuild/archive/zip_format.h"

namespace sb::zip {

MemberSource::MemberSource(binary::ByteSource& file, const Entry& entry, StreamLimits limits,
                           std::size_t window, std::size_t head)
    : file_(file),
      entry_(entry),
      limits_(limits),
      window_size_(std::max<std::size_t>(window, 4096)),
      head_limit_(head) {
  if (entry_.method != format::kStored) stream_ = std::make_unique<MemberStream>(file_, entry_, limits_);
}

void MemberSource::restart() {
  stream_ = std::make_unique<MemberStream>(file_, entry_, limits_);
  window_.clear();
  window_start_ = 0;
  ++restarts_;
}
// (head_ survives a restart: the same bytes come out again.)

bool MemberSource::advance() {
  window_start_ += window_.size();
  window_.resize(window_size_);
  std::size_t got = stream_->next(window_.data(), window_.size());
  window_.resize(got);
  if (stream_->failed()) error_ = stream_->error();
  if (window_start_ == head_.size() && head_.size() < head_limit_) {
    std::size_t k = std::min(got, head_limit_ - head_.size());
    head_.insert(head_.end(), window_.begin(), window_.begin() + static_cast<long>(k));
  }
  return got > 0;
}

std::size_t MemberSource::copy_from_head(std::uint64_t offset, std::uint8_t* out,
                                         std::size_t n) const {
  if (offset >= head_.size()) return 0;
  auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, head_.size() - offset));
  std::memcpy(out, head_.data() + offset, k);
  return k;
}

bool MemberSource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!binary::in_bounds(offset, n, size())) return false;
  if (entry_.method == format::kStored)
    return entry_.compressed_size == entry_.uncompressed_size &&
           file_.read(entry_.data_offset + offset, dst, n);
  auto* out = static_cast<std::uint8_t*>(dst);
  while (n > 0) {
    std::uint64_t window_end = window_start_ + window_.size();
    if (std::size_t k = copy_from_head(offset, out, n)) {
      out += k;
      offset += k;
      n -= k;
    } else if (offset < window_start_) {
      restart();
    } else if (offset < window_end) {
      auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, window_end - offset));
      std::memcpy(out, window_.data() + (offset - window_start_), k);
      out += k;
      offset += k;
      n -= k;
    } else if (!advance()) {
      return false;
    }
  }
  return true;
}

}  // namespace sb::zip
