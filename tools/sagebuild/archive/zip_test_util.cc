#include "sagebuild/archive/zip_test_util.h"

#include <atomic>
#include <fstream>
#include <stdexcept>

#include <zlib.h>
#include "sagebuild/common/os.h"

namespace sb::zip::testing {

namespace {

void put16(std::string& s, std::uint32_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>((v >> 8) & 0xFF);
}
void put32(std::string& s, std::uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}

struct Placed {
  std::uint32_t offset, crc, csize, usize;
  std::uint16_t method;
  std::string body;
};

Placed encode(const TestMember& m) {
  Placed p{};
  p.body = m.deflate ? raw_deflate(m.data, m.deflate_level) : m.data;
  p.method = m.method.value_or(m.deflate ? 8 : 0);
  p.crc = m.crc.value_or(static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(m.data.data()), static_cast<uInt>(m.data.size()))));
  p.csize = static_cast<std::uint32_t>(p.body.size());
  p.usize = m.declared_usize.value_or(static_cast<std::uint32_t>(m.data.size()));
  return p;
}

void local_header(std::string& out, const TestMember& m, const Placed& p) {
  const std::string& name = m.local_name ? *m.local_name : m.name;
  put32(out, 0x04034b50);
  put16(out, 20);
  put16(out, m.flags);
  put16(out, p.method);
  put16(out, 0);
  put16(out, 0x21);  // 1980-01-01
  put32(out, p.crc);
  put32(out, p.csize);
  put32(out, p.usize);
  put16(out, static_cast<std::uint32_t>(name.size()));
  put16(out, 0);
  out += name;
  out += p.body;
}

void central_header(std::string& out, const TestMember& m, const Placed& p) {
  put32(out, 0x02014b50);
  put16(out, (m.made_by_os << 8) | 20);
  put16(out, 20);
  put16(out, m.flags);
  put16(out, p.method);
  put16(out, 0);
  put16(out, 0x21);
  put32(out, p.crc);
  put32(out, p.csize);
  put32(out, p.usize);
  put16(out, static_cast<std::uint32_t>(m.name.size()));
  put32(out, 0);  // extra and comment lengths
  put32(out, 0);  // disk, internal attributes
  put32(out, m.external_attr);
  put32(out, m.local_offset.value_or(p.offset));
  out += m.name;
}

}  // namespace

std::string raw_deflate(const std::string& data, int level) {
  z_stream s{};
  if (deflateInit2(&s, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("deflateInit2");
  std::string out(deflateBound(&s, data.size()), '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  s.avail_in = static_cast<uInt>(data.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate");
  return out;
}

std::string build_zip(const TestZip& zip) {
  std::string out = zip.prefix;
  std::vector<Placed> placed;
  for (const auto& m : zip.members) {
    placed.push_back(encode(m));
    placed.back().offset = static_cast<std::uint32_t>(out.size());
    local_header(out, m, placed.back());
  }
  auto cd_offset = static_cast<std::uint32_t>(out.size());
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < zip.members.size(); ++i)
    if (zip.members[i].in_central) {
      central_header(out, zip.members[i], placed[i]);
      ++count;
    }
  auto cd_size = static_cast<std::uint32_t>(out.size() - cd_offset);
  put32(out, 0x06054b50);
  put32(out, 0);
  put16(out, count);
  put16(out, count);
  put32(out, cd_size);
  put32(out, cd_offset);
  put16(out, static_cast<std::uint32_t>(zip.comment.size()));
  return out + zip.comment + zip.suffix;
}

TempFile::TempFile(const std::string& content) {
  static std::atomic<int> n{0};
  path_ = std::filesystem::temp_directory_path() /
          ("sb-archive-test-" + std::to_string(sb::process_id()) + "-" + std::to_string(n++));
  std::ofstream f(path_, std::ios::binary);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!f) throw std::runtime_error("cannot write " + path_.string());
}

TempFile::~TempFile() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace sb::zip::testing
