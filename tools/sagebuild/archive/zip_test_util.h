// Test helper: builds small zip archives byte by byte, with knobs for the
// defects the reader must find.  Test-only (not part of sb_archive).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sb::zip::testing {

struct TestMember {
  std::string name;
  std::string data;
  bool deflate = false;
  int deflate_level = 6;  // zlib's; Python's zipfile uses 9 with compresslevel=9
  std::uint16_t flags = 0;
  std::uint32_t external_attr = 0100644u << 16;
  std::uint8_t made_by_os = 3;
  std::optional<std::uint16_t> method;          // overrides the real method
  std::optional<std::uint32_t> crc;             // overrides the real CRC-32
  std::optional<std::uint32_t> declared_usize;  // overrides the real size
  std::optional<std::uint32_t> local_offset;    // overrides where the CD points
  std::optional<std::string> local_name;        // local header names this instead
  bool in_central = true;                       // false: local header only
};

// A plain member: its name, its bytes, stored or deflated.
inline TestMember member(std::string name, std::string data, bool deflate = false) {
  TestMember m;
  m.name = std::move(name);
  m.data = std::move(data);
  m.deflate = deflate;
  return m;
}

struct TestZip {
  TestZip(std::vector<TestMember> m, std::string prefix_bytes = {}, std::string suffix_bytes = {},
          std::string archive_comment = {})
      : members(std::move(m)),
        prefix(std::move(prefix_bytes)),
        suffix(std::move(suffix_bytes)),
        comment(std::move(archive_comment)) {}
  std::vector<TestMember> members;
  std::string prefix, suffix, comment;
};

std::string build_zip(const TestZip& zip);
std::string raw_deflate(const std::string& data, int level = 6);

// A file under the system temp directory, removed on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& content);
  ~TempFile();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace sb::zip::testing
