#include "sagebuild/archive/member_source.h"

#include <algorithm>
#include <cstring>

#include "sagebuild/archive/zip_format.h"

namespace sb::zip {

MemberSource::MemberSource(binary::ByteSource& file, const Entry& entry, StreamLimits limits, std::size_t window,
                           std::size_t head)
    : file_(file),
      entry_(entry),
      limits_(limits),
      // A small member gets a small window: zeroing 256 KiB for each of
      // 100,000 tiny libraries would cost seconds.
      window_size_(static_cast<std::size_t>(
          std::max<std::uint64_t>(std::min<std::uint64_t>(window, entry.uncompressed_size + 1), 4096))),
      head_limit_(head),
      spacing_(std::max(kMinCheckpointSpacing, entry.uncompressed_size / kMaxCheckpoints + 1)) {
  // The declared size is what the budget scales with; the stream itself
  // fails once a member produces more than it declared.
  std::uint64_t size = std::min<std::uint64_t>(entry_.uncompressed_size, limits_.max_bytes);
  budget_ = size > (~0ull - kBudgetSlack) / kBudgetFactor ? ~0ull : kBudgetFactor * size + kBudgetSlack;
  if (entry_.method != format::kStored) stream_ = std::make_unique<MemberStream>(file_, entry_, limits_);
}

// Goes back to the last checkpoint at or before `offset` (the start when
// there is none): a copy, so the checkpoint serves again.
void MemberSource::resume_before(std::uint64_t offset) {
  auto it = std::upper_bound(checkpoints_.begin(), checkpoints_.end(), offset,
                             [](std::uint64_t o, const Checkpoint& c) { return o < c.offset; });
  if (it == checkpoints_.begin()) {
    stream_ = std::make_unique<MemberStream>(file_, entry_, limits_);
    window_start_ = 0;
  } else {
    --it;
    stream_ = it->stream->clone();
    window_start_ = it->offset;
  }
  window_.clear();
  ++restarts_;
}
// (head_ survives: the same bytes come out again.)

// Saves the stream's state when it passes the next spacing boundary beyond
// the last checkpoint; only ever forward, so the list stays sorted.
void MemberSource::maybe_checkpoint() {
  std::uint64_t last = checkpoints_.empty() ? 0 : checkpoints_.back().offset;
  if (window_start_ < last + spacing_ || checkpoints_.size() >= kMaxCheckpoints) return;
  checkpoints_.push_back({window_start_, stream_->clone()});
}

bool MemberSource::advance() {
  window_start_ += window_.size();
  window_.clear();
  if (inflated_ >= budget_) {
    error_ = "reading this member at random needs more than " + std::to_string(budget_) + " bytes of decompression (" +
             std::to_string(kBudgetFactor) + " times its size): its tables send every read backwards";
    return false;
  }
  maybe_checkpoint();
  window_.resize(window_size_);
  std::size_t got = stream_->next(window_.data(), window_.size());
  window_.resize(got);
  inflated_ += got;
  if (stream_->failed()) error_ = stream_->error();
  if (window_start_ == head_.size() && head_.size() < head_limit_) {
    std::size_t k = std::min(got, head_limit_ - head_.size());
    head_.insert(head_.end(), window_.begin(), window_.begin() + static_cast<long>(k));
  }
  return got > 0;
}

std::size_t MemberSource::copy_from_head(std::uint64_t offset, std::uint8_t* out, std::size_t n) const {
  if (offset >= head_.size()) return 0;
  auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, head_.size() - offset));
  std::memcpy(out, head_.data() + offset, k);
  return k;
}

bool MemberSource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!binary::in_bounds(offset, n, size())) return false;
  if (entry_.method == format::kStored)
    return entry_.compressed_size == entry_.uncompressed_size && file_.read(entry_.data_offset + offset, dst, n);
  auto* out = static_cast<std::uint8_t*>(dst);
  while (n > 0) {
    std::uint64_t window_end = window_start_ + window_.size();
    if (std::size_t k = copy_from_head(offset, out, n)) {
      out += k;
      offset += k;
      n -= k;
    } else if (offset < window_start_) {
      resume_before(offset);
    } else if (offset < window_end) {
      auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, window_end - offset));
      std::memcpy(out, window_.data() + (offset - window_start_), k);
      out += k;
      offset += k;
      n -= k;
    } else if (offset - window_end >= spacing_ && !checkpoints_.empty() && checkpoints_.back().offset > window_end) {
      resume_before(offset);  // far ahead, past a checkpoint: jump there
    } else if (!advance()) {
      return false;
    }
  }
  return true;
}

}  // namespace sb::zip
