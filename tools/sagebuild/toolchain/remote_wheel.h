// Facts from a wheel on a package index without downloading it: the files a
// PEP 691 JSON project page lists, and one member (torch/version.py) read
// with HTTP range requests (the zip's end record, its central directory,
// then the member's local header and data: four requests, ~2 MB of a
// 530 MB torch wheel).
//
// Why the wheel itself and not PEP 658's .metadata file: the CUDA a torch
// build was made for is written only in torch/version.py (`cuda = '13.0'`);
// METADATA names CUDA only indirectly, through nvidia-* requirements that
// differ between releases.  Ranges read exactly the file `provision_torch`
// reads from a downloaded wheel, so both paths check the same fact.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/common/error.h"
#include "sagebuild/run/process.h"

namespace sb::toolchain {

using run::Command;
using run::ProcessRunner;
using run::Result;

struct IndexFile {
  std::string filename;
  std::string url;         // absolute
  std::uint64_t size = 0;  // 0 when the page does not say (PEP 700)
};

// The files of a PEP 691 JSON project page; relative URLs are resolved
// against `page_url`.  Throws IoError naming the page when it is not one.
std::vector<IndexFile> parse_simple_index_json(std::string_view json, const std::string& page_url);

// The wheel `<project>-<version>-<python_tag>-<python_tag>-<platform>.whl`
// for the first python tag (e.g. "cp314") and platform that has one.
std::optional<IndexFile> pick_wheel(const std::vector<IndexFile>& files, const std::string& project,
                                    const std::string& version, const std::vector<std::string>& python_tags,
                                    const std::vector<std::string>& platforms);

// The index pip uses: $PIP_INDEX_URL, else PyPI's simple index.
std::string default_index_url();

// The server answered a range request with something other than the range.
class RangeNotSupported : public IoError {
 public:
  using IoError::IoError;
};

// Returns exactly [offset, offset + length) of the remote file, or throws
// (RangeNotSupported when the server ignores ranges, IoError otherwise).
using RangeFetch = std::function<std::string(std::uint64_t offset, std::uint64_t length)>;

// A ByteSource over a remote file of known size: each miss fetches at least
// `min_fetch` bytes and keeps them, so the zip reader's small reads near one
// another cost one request.
class RangeSource final : public binary::ByteSource {
 public:
  RangeSource(std::uint64_t size, RangeFetch fetch, std::uint64_t min_fetch = 256 * 1024);
  std::uint64_t size() const override { return size_; }
  bool read(std::uint64_t offset, void* dst, std::size_t n) override;
  // Fetches [offset, offset + n) in one request ahead of the reads.
  void prefetch(std::uint64_t offset, std::uint64_t n);
  int requests() const { return requests_; }
  const std::string& last_error() const { return last_error_; }

 private:
  std::uint64_t size_;
  RangeFetch fetch_;
  std::uint64_t min_fetch_;
  std::map<std::uint64_t, std::string> spans_;  // start -> bytes
  int requests_ = 0;
  std::string last_error_;
};

// One member of the zip behind `src`, CRC-checked; throws IoError when the
// zip has no such member, is malformed, or the member exceeds max_bytes.
// A RangeNotSupported from the fetch propagates as itself.
std::string read_zip_member(RangeSource& src, const std::string& name, std::uint64_t max_bytes = 1 << 20);

// HTTP through the curl program (present wherever pip can download): GET a
// page, and byte ranges of a file.  `scratch` holds the response files.
std::string http_get(ProcessRunner& runner, const std::string& url, const std::string& accept,
                     const std::filesystem::path& scratch);
RangeFetch http_range_fetch(ProcessRunner& runner, const std::string& url, const std::filesystem::path& scratch);

}  // namespace sb::toolchain
