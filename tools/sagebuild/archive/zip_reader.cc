#include "sagebuild/archive/zip_reader.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "sagebuild/archive/member_source.h"
#include "sagebuild/archive/member_stream.h"
#include "sagebuild/archive/zip_format.h"
#include "sagebuild/archive/zip_parse.h"
#include "sagebuild/binary/byte_source.h"

namespace sb::zip {

bool Entry::is_symlink() const {
  return made_by_os == format::kMadeByUnix && (unix_mode() & format::kUnixTypeMask) == format::kUnixSymlink;
}

namespace {

constexpr std::size_t kOutputChunk = 256 * 1024;

class FileReader final : public Reader {
 public:
  FileReader(std::unique_ptr<binary::ByteSource> file, Limits limits) : file_(std::move(file)), limits_(limits) {
    detail::EndRecord end;
    if (!detail::find_end_record(*file_, end, findings_)) return;
    if (!detail::parse_central_directory(*file_, end, limits_, entries_, states_, findings_)) {
      entries_.clear();
      states_.clear();
      return;
    }
    detail::check_local_headers(*file_, end, entries_, states_, findings_);
    check_archive_ratio();
    // find() is called once per License-File line, script and build-info
    // lookup: a hash index keeps that linear in a 200,000-member archive.
    index_.reserve(entries_.size());
    for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].name, i);
    usable_ = true;
  }

  bool usable() const override { return usable_; }
  const std::vector<Entry>& entries() const override { return entries_; }
  const Findings& findings() const override { return findings_; }
  std::uint64_t file_size() const override { return file_->size(); }

  ReadResult read(std::size_t index, const Sink& sink) override {
    ReadResult r;
    if (index >= entries_.size()) {
      r.error = "no member " + std::to_string(index) + " (archive has " + std::to_string(entries_.size()) + ")";
      return r;
    }
    const Entry& e = entries_[index];
    if (!states_[index].refuse.empty()) {
      r.error = "refused: " + states_[index].refuse;
      return r;
    }
    MemberStream stream(*file_, e, stream_limits());
    // One buffer for every read: zeroing a fresh 256 KiB per member costs
    // more than reading 200,000 empty members.
    if (buf_.empty()) buf_.resize(kOutputChunk);
    auto& buf = buf_;
    while (!stream.done() && !stream.failed()) {
      std::size_t n = stream.next(buf.data(), buf.size());
      total_read_ += n;
      r.bytes += n;
      if (n && !sink(buf.data(), n)) {
        r.stopped = true;
        return r;
      }
    }
    if (stream.failed()) return failed(e, stream.error(), stream.hit_limit(), r);
    r.ok = true;
    return r;
  }

  bool read_small(std::size_t index, std::uint64_t max_bytes, std::string& out, std::string& error) override {
    out.clear();
    if (index < entries_.size() && entries_[index].uncompressed_size > max_bytes) {
      error = "member '" + entries_[index].name + "' declares " + std::to_string(entries_[index].uncompressed_size) +
              " bytes, more than the " + std::to_string(max_bytes) + " allowed";
      return false;
    }
    bool too_big = false;
    ReadResult r = read(index, [&](const std::uint8_t* d, std::size_t n) {
      if (out.size() + n > max_bytes) return !(too_big = true);
      out.append(reinterpret_cast<const char*>(d), n);
      return true;
    });
    if (too_big)
      error = "member is larger than " + std::to_string(max_bytes) + " bytes";
    else if (!r.ok)
      error = r.error;
    if (!r.ok) out.clear();
    return r.ok;
  }

  std::unique_ptr<binary::ByteSource> open_member(std::size_t index, std::string& error) override {
    if (index >= entries_.size()) {
      error = "no member " + std::to_string(index);
      return nullptr;
    }
    if (!states_[index].refuse.empty()) {
      error = "refused: " + states_[index].refuse;
      return nullptr;
    }
    return std::make_unique<MemberSource>(*file_, entries_[index], stream_limits());
  }

  long find(std::string_view name) const override {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : static_cast<long>(it->second);
  }

 private:
  StreamLimits stream_limits() const {
    StreamLimits s;
    std::uint64_t total_left = archive_budget_ > total_read_ ? archive_budget_ - total_read_ : 0;
    s.max_bytes = std::min(limits_.max_member_uncompressed, total_left);
    s.max_ratio = limits_.max_ratio;
    s.ratio_applies_above = limits_.ratio_applies_above;
    return s;
  }

  // PyPI bounds the archive as a whole (Z10): what all members declare,
  // over 64 MiB, at most 50 times the file.  Such an archive is read only up
  // to 64 MiB in all (255 members of zeros, 16 MB inflating to 15.7 GiB, took
  // 14.5 s); any other is read whole: no member yields more than it declares.
  void check_archive_ratio() {
    std::uint64_t total = 0;
    for (const auto& e : entries_) total = total + e.uncompressed_size < total ? ~0ull : total + e.uncompressed_size;
    if (total <= limits_.ratio_applies_above ||
        double(total) <= limits_.max_ratio * double(std::max<std::uint64_t>(file_->size(), 1)))
      return;
    archive_budget_ = std::min(limits_.max_total_uncompressed, limits_.ratio_applies_above);
    add(findings_, "Z10", Severity::Error, "",
        "the members declare " + std::to_string(total) + " bytes in all from a " + std::to_string(file_->size()) +
            "-byte archive (ratio " + std::to_string(std::uint64_t(double(total) / double(file_->size()))) +
            "); only the first " + std::to_string(archive_budget_) + " bytes are read",
        "an archive inflating to at most " + std::to_string(std::uint64_t(limits_.max_ratio)) +
            " times its size when over 64 MiB (PyPI refuses it as a compression bomb)");
  }

  // A failed read is a Z2 finding (Z5 when a limit stopped it), once per member.
  ReadResult& failed(const Entry& e, const std::string& why, bool limit, ReadResult& r) {
    r.error = why;
    std::string rule = limit ? "Z5" : "Z2";
    bool seen = std::any_of(findings_.begin(), findings_.end(),
                            [&](const Finding& f) { return f.member == e.name && f.rule == rule && f.message == why; });
    if (!seen)
      add(findings_, rule, Severity::Error, e.name, why,
          limit ? "members within the configured size limits"
                : "data that decompresses to the declared size and CRC-32");
    return r;
  }

  std::unique_ptr<binary::ByteSource> file_;
  Limits limits_;
  std::vector<Entry> entries_;
  std::vector<detail::EntryState> states_;
  std::unordered_map<std::string_view, std::size_t> index_;  // name -> first entry (views into entries_)
  Findings findings_;
  std::uint64_t total_read_ = 0;
  std::uint64_t archive_budget_ = limits_.max_total_uncompressed;  // lowered by check_archive_ratio
  std::vector<std::uint8_t> buf_;
  bool usable_ = false;
};

}  // namespace

std::unique_ptr<Reader> Reader::open(const std::filesystem::path& path, Limits limits) {
  return std::make_unique<FileReader>(binary::FileSource::open(path), limits);
}

std::unique_ptr<Reader> Reader::open(std::unique_ptr<binary::ByteSource> source, Limits limits) {
  return std::make_unique<FileReader>(std::move(source), limits);
}

}  // namespace sb::zip
