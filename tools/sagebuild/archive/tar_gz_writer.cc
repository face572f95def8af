#include "sagebuild/archive/tar_gz_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <vector>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/text.h"

namespace sb::tar {

namespace {

constexpr std::size_t kBlock = 512;

// An octal field of `width` bytes: digits, then NUL.
void octal(char* field, std::size_t width, std::uint64_t value, const std::string& what) {
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + (value & 7)));
    value >>= 3;
  } while (value);
  if (digits.size() > width - 1) throw UsageError(what + " does not fit a ustar header");
  std::memset(field, '0', width - 1 - digits.size());
  std::memcpy(field + (width - 1 - digits.size()), digits.data(), digits.size());
  field[width - 1] = '\0';
}

}  // namespace

std::string ustar_header(const std::string& member, std::uint64_t size, std::uint32_t mode, std::int64_t mtime) {
  if (member.empty() || member.front() == '/' || member.find('\0') != std::string::npos)
    throw UsageError("tar member name \"" + printable(member) + "\": expected a relative path");
  std::string prefix, name = member;
  if (name.size() > 100) {
    // The first '/' after which at most 100 bytes remain: the longest name part.
    std::size_t cut = std::string::npos;
    for (std::size_t i = 1; i < name.size() && cut == std::string::npos; ++i)
      if (name[i] == '/' && name.size() - i - 1 <= 100) cut = i;
    if (cut == std::string::npos || cut > 155 || cut + 1 == name.size())
      throw UsageError("tar member name \"" + printable(member) +
                       "\" is too long for ustar (name 100, prefix 155 bytes)");
    prefix = name.substr(0, cut);
    name = name.substr(cut + 1);
  }
  char h[kBlock] = {};
  std::memcpy(h, name.data(), name.size());
  octal(h + 100, 8, mode & 07777, "mode");
  octal(h + 108, 8, 0, "uid");
  octal(h + 116, 8, 0, "gid");
  octal(h + 124, 12, size, "the size of " + printable(member));
  octal(h + 136, 12, static_cast<std::uint64_t>(mtime < 0 ? 0 : mtime), "mtime");
  h[156] = '0';  // a regular file
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 345, prefix.data(), prefix.size());
  std::memset(h + 148, ' ', 8);  // the checksum counts its own field as spaces
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  octal(h + 148, 7, sum, "checksum");
  h[155] = ' ';
  return std::string(h, kBlock);
}

std::string ustar_entry(const Member& m, std::int64_t mtime) {
  std::string out = ustar_header(m.name, m.data.size(), m.mode, mtime);
  out += m.data;
  out.append((kBlock - m.data.size() % kBlock) % kBlock, '\0');
  return out;
}

namespace {

// A gzip stream (level 9, OS byte 255, no name or mtime) handing its output
// to `sink` piece by piece.
class Gzip {
 public:
  explicit Gzip(std::function<void(const char*, std::size_t)> sink) : sink_(std::move(sink)) {
    if (deflateInit2(&z_, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw IoError("zlib: deflateInit2 failed");
    header_.os = 255;  // "unknown": the same bytes on every OS
    deflateSetHeader(&z_, &header_);
  }
  ~Gzip() { deflateEnd(&z_); }
  Gzip(const Gzip&) = delete;
  Gzip& operator=(const Gzip&) = delete;

  void write(const char* data, std::size_t n) { run(data, n, Z_NO_FLUSH); }
  void zeros(std::size_t n) {
    static const char block[kBlock] = {};
    while (n > 0) {
      std::size_t k = std::min(n, kBlock);
      write(block, k);
      n -= k;
    }
  }
  void finish() { run(nullptr, 0, Z_FINISH); }

 private:
  void run(const char* data, std::size_t n, int flush) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z_.avail_in = static_cast<uInt>(n);
    char out[1 << 16];
    int rc;
    do {
      z_.next_out = reinterpret_cast<Bytef*>(out);
      z_.avail_out = sizeof out;
      rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) throw IoError("zlib: deflate failed");
      sink_(out, sizeof out - z_.avail_out);
    } while (z_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }

  std::function<void(const char*, std::size_t)> sink_;
  z_stream z_{};
  gz_header header_{};
};

// Every member into `gz`: its header, its bytes (from memory or streamed
// from its file), its padding; then the two zero blocks.
void write_members(Gzip& gz, const std::vector<Member>& members, std::int64_t mtime) {
  std::vector<char> buf(1 << 16);
  for (const auto& m : members) {
    std::uint64_t size = m.file.empty() ? m.data.size() : m.size;
    std::string header = ustar_header(m.name, size, m.mode, mtime);
    gz.write(header.data(), header.size());
    if (m.file.empty()) {
      gz.write(m.data.data(), m.data.size());
    } else {
      std::ifstream in(m.file, std::ios::binary);
      if (!in) throw IoError("cannot open " + printable(m.file.string()) + " for reading");
      std::uint64_t left = size;
      while (left > 0) {
        in.read(buf.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(left, buf.size())));
        auto got = static_cast<std::size_t>(in.gcount());
        if (got == 0) break;
        gz.write(buf.data(), got);
        left -= got;
      }
      if (left > 0 || in.peek() != std::ifstream::traits_type::eof())
        throw IoError(printable(m.file.string()) + " changed size while it was read (expected " + std::to_string(size) +
                      " bytes); run again on a tree nothing is writing to");
    }
    gz.zeros((kBlock - size % kBlock) % kBlock);
  }
  gz.zeros(2 * kBlock);
  gz.finish();
}

}  // namespace

std::string tar_gz(const std::vector<Member>& members, std::int64_t mtime) {
  std::string out;
  Gzip gz([&out](const char* d, std::size_t n) { out.append(d, n); });
  write_members(gz, members, mtime);
  return out;
}

void write_tar_gz(const std::filesystem::path& destination, const std::vector<Member>& members, std::int64_t mtime) {
  AtomicOutput out(destination);
  {
    std::ofstream f(out.temp_path(), std::ios::binary | std::ios::trunc);
    if (!f) throw IoError("cannot create " + printable(out.temp_path().string()));
    Gzip gz([&f](const char* d, std::size_t n) { f.write(d, static_cast<std::streamsize>(n)); });
    write_members(gz, members, mtime);
    f.flush();
    if (!f) throw IoError("error writing " + printable(out.temp_path().string()));
  }
  out.commit();
}

}  // namespace sb::tar
