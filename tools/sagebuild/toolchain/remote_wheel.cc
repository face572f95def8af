#include "sagebuild/toolchain/remote_wheel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <regex>

#include <nlohmann/json.hpp>

#include "sagebuild/archive/member_stream.h"
#include "sagebuild/archive/zip_parse.h"
#include "sagebuild/common/fs.h"

namespace sb::toolchain {

namespace fs = std::filesystem;

namespace {

std::string resolve_url(const std::string& url, const std::string& page) {
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0 || url.rfind("file://", 0) == 0) return url;
  std::size_t scheme = page.find("://");
  if (scheme == std::string::npos) return url;
  if (url.rfind("/", 0) == 0) {
    std::size_t host_end = page.find('/', scheme + 3);
    return page.substr(0, host_end) + url;
  }
  return page.substr(0, page.rfind('/') + 1) + url;
}

}  // namespace

std::vector<IndexFile> parse_simple_index_json(std::string_view json, const std::string& page_url) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_array())
    throw IoError(page_url + " is not a PEP 691 JSON project page (no \"files\" list)");
  std::vector<IndexFile> out;
  for (const auto& f : j["files"]) {
    if (!f.is_object() || !f.contains("filename") || !f["filename"].is_string() || !f.contains("url") ||
        !f["url"].is_string())
      throw IoError(page_url + ": a file entry without filename and url");
    IndexFile x;
    x.filename = f["filename"].get<std::string>();
    x.url = resolve_url(f["url"].get<std::string>(), page_url);
    if (f.contains("size") && f["size"].is_number_unsigned()) x.size = f["size"].get<std::uint64_t>();
    out.push_back(std::move(x));
  }
  return out;
}

std::optional<IndexFile> pick_wheel(const std::vector<IndexFile>& files, const std::string& project,
                                    const std::string& version, const std::vector<std::string>& python_tags,
                                    const std::vector<std::string>& platforms) {
  for (const auto& py : python_tags)
    for (const auto& plat : platforms) {
      std::string want = project + "-" + version + "-" + py + "-" + py + "-" + plat + ".whl";
      for (const auto& f : files)
        if (f.filename == want) return f;
    }
  return std::nullopt;
}

std::string default_index_url() {
  const char* e = std::getenv("PIP_INDEX_URL");
  std::string u = e && *e ? e : "https://pypi.org/simple";
  while (!u.empty() && u.back() == '/') u.pop_back();
  return u;
}

// ---------------------------------------------------------------------------

RangeSource::RangeSource(std::uint64_t size, RangeFetch fetch, std::uint64_t min_fetch)
    : size_(size), fetch_(std::move(fetch)), min_fetch_(min_fetch) {}

void RangeSource::prefetch(std::uint64_t offset, std::uint64_t n) {
  if (!binary::in_bounds(offset, n, size_) || n == 0) return;
  std::string bytes = fetch_(offset, n);
  ++requests_;
  if (bytes.size() != n)
    throw IoError("range request for " + std::to_string(n) + " bytes at " + std::to_string(offset) + " returned " +
                  std::to_string(bytes.size()));
  spans_[offset] = std::move(bytes);
}

bool RangeSource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!binary::in_bounds(offset, n, size_)) return false;
  if (n == 0) return true;
  // A kept span that covers the whole read.
  auto it = spans_.upper_bound(offset);
  if (it != spans_.begin()) {
    --it;
    if (offset + n <= it->first + it->second.size()) {
      std::memcpy(dst, it->second.data() + (offset - it->first), n);
      return true;
    }
  }
  std::uint64_t len = std::min<std::uint64_t>(std::max<std::uint64_t>(n, min_fetch_), size_ - offset);
  try {
    prefetch(offset, len);
  } catch (const RangeNotSupported&) {
    throw;  // not a read error of this range: the caller falls back to a download
  } catch (const IoError& e) {
    last_error_ = e.what();
    return false;
  }
  std::memcpy(dst, spans_[offset].data(), n);
  return true;
}

std::string read_zip_member(RangeSource& src, const std::string& name, std::uint64_t max_bytes) {
  Findings findings;
  zip::detail::EndRecord end;
  auto why = [&](const std::string& what) {
    std::string s = what;
    if (!src.last_error().empty()) s += " (" + src.last_error() + ")";
    for (const auto& f : findings) s += "; " + f.message;
    return s;
  };
  if (!zip::detail::find_end_record(src, end, findings)) throw IoError(why("no zip end record"));
  // The whole central directory in one request.
  src.prefetch(end.cd_offset, end.cd_size);
  std::vector<zip::Entry> entries;
  std::vector<zip::detail::EntryState> states;
  if (!zip::detail::parse_central_directory(src, end, zip::Limits{}, entries, states, findings))
    throw IoError(why("unreadable central directory"));
  auto it = std::find_if(entries.begin(), entries.end(), [&](const zip::Entry& e) { return e.name == name; });
  if (it == entries.end()) throw IoError("no member " + name);
  if (!states[it - entries.begin()].refuse.empty()) throw IoError(name + ": " + states[it - entries.begin()].refuse);
  if (it->uncompressed_size > max_bytes)
    throw IoError(name + " is " + std::to_string(it->uncompressed_size) + " bytes, more than " +
                  std::to_string(max_bytes));
  // The local header: fixed 30 bytes, then its own name and extra lengths.
  std::uint8_t lh[30];
  if (!src.read(it->local_header_offset, lh, sizeof lh)) throw IoError(why(name + ": local header out of range"));
  auto u16 = [&](int at) { return static_cast<std::uint32_t>(lh[at] | (lh[at + 1] << 8)); };
  if (u16(0) != 0x4b50 || u16(2) != 0x0403) throw IoError(name + ": no local header signature at its offset");
  zip::Entry e = *it;
  e.data_offset = it->local_header_offset + 30 + u16(26) + u16(28);
  zip::StreamLimits limits;
  limits.max_bytes = max_bytes;
  zip::MemberStream stream(src, e, limits);
  std::string out;
  std::uint8_t buf[16384];
  while (!stream.done() && !stream.failed()) {
    std::size_t got = stream.next(buf, sizeof buf);
    out.append(reinterpret_cast<const char*>(buf), got);
  }
  if (stream.failed()) throw IoError(why(name + ": " + stream.error()));
  return out;
}

// ---------------------------------------------------------------------------

namespace {

Command curl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"curl", "--silent",          "--show-error", "--location", "--retry",
                                   "2",    "--connect-timeout", "20",           "--max-time", "120"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Command(argv);
}

}  // namespace

std::string http_get(ProcessRunner& runner, const std::string& url, const std::string& accept,
                     const fs::path& scratch) {
  fs::create_directories(scratch);
  fs::path body = scratch / "page.body";
  Result r = runner.run(curl({"--fail", "-H", "Accept: " + accept, "-o", body.string(), url}));
  if (!r.spawned) throw IoError("cannot run curl: " + r.err);
  if (!r.ok()) throw IoError("GET " + url + " failed (curl exit " + std::to_string(r.exit_code) + "): " + r.err);
  return read_file(body);
}

RangeFetch http_range_fetch(ProcessRunner& runner, const std::string& url, const fs::path& scratch) {
  fs::create_directories(scratch);
  return [&runner, url, scratch](std::uint64_t offset, std::uint64_t length) {
    fs::path body = scratch / "range.body";
    std::string range = std::to_string(offset) + "-" + std::to_string(offset + length - 1);
    // A server that ignores the range sends the whole file (200): stop it
    // after twice the bytes asked for instead of downloading 530 MB.
    Result r = runner.run(curl({"--fail", "--range", range, "--max-filesize", std::to_string(2 * length + 4096),
                                "--write-out", "%{http_code}", "-o", body.string(), url}));
    if (!r.spawned) throw IoError("cannot run curl: " + r.err);
    std::string code = r.out.substr(0, 3);
    if (r.exit_code == 63 || (r.ok() && code != "206"))
      throw RangeNotSupported(url + " does not answer range requests (HTTP " + code + ")");
    if (!r.ok())
      throw IoError("range " + range + " of " + url + " failed (curl exit " + std::to_string(r.exit_code) +
                    "): " + r.err);
    std::string bytes = read_file(body);
    if (bytes.size() != length)
      throw RangeNotSupported(url + ": asked for bytes " + range + ", got " + std::to_string(bytes.size()));
    return bytes;
  };
}

}  // namespace sb::toolchain
