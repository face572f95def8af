#include "sagebuild/archive/tar_gz_writer.h"

#include <zlib.h>

#include <cstring>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"

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

std::string ustar_entry(const Member& m, std::int64_t mtime) {
  if (m.name.empty() || m.name.front() == '/' || m.name.find('\0') != std::string::npos)
    throw UsageError("tar member name \"" + m.name + "\": expected a relative path");
  std::string prefix, name = m.name;
  if (name.size() > 100) {
    // The first '/' after which at most 100 bytes remain: the longest name part.
    std::size_t cut = std::string::npos;
    for (std::size_t i = 1; i < name.size() && cut == std::string::npos; ++i)
      if (name[i] == '/' && name.size() - i - 1 <= 100) cut = i;
    if (cut == std::string::npos || cut > 155 || cut + 1 == name.size())
      throw UsageError("tar member name \"" + m.name + "\" is too long for ustar (name 100, prefix 155 bytes)");
    prefix = name.substr(0, cut);
    name = name.substr(cut + 1);
  }
  char h[kBlock] = {};
  std::memcpy(h, name.data(), name.size());
  octal(h + 100, 8, m.mode & 07777, "mode");
  octal(h + 108, 8, 0, "uid");
  octal(h + 116, 8, 0, "gid");
  octal(h + 124, 12, m.data.size(), "the size of " + m.name);
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
  std::string out(h, kBlock);
  out += m.data;
  out.append((kBlock - m.data.size() % kBlock) % kBlock, '\0');
  return out;
}

std::string tar_gz(const std::vector<Member>& members, std::int64_t mtime) {
  std::string tar;
  for (const auto& m : members) tar += ustar_entry(m, mtime);
  tar.append(2 * kBlock, '\0');

  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw IoError("zlib: deflateInit2 failed");
  gz_header header{};
  header.os = 255;  // "unknown": the same bytes on every OS
  deflateSetHeader(&z, &header);
  std::string out(deflateBound(&z, tar.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(tar.data());
  z.avail_in = static_cast<uInt>(tar.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw IoError("zlib: deflate did not finish (" + std::to_string(rc) + ")");
  return out;
}

void write_tar_gz(const std::filesystem::path& destination, const std::vector<Member>& members, std::int64_t mtime) {
  write_file_atomic(destination, tar_gz(members, mtime));
}

}  // namespace sb::tar
