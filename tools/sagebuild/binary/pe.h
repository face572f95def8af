// PE/COFF image reader (PE32 and PE32+) for the .pyd/.dll files in Windows
// wheels: machine (as a platform tag), imported DLLs (regular and
// delay-load), and section lookup, e.g. the CUDA fatbin section, which
// image section names truncate to 8 bytes (".nv_fatb").  Everything is
// bounds-checked against the ByteSource; tables are capped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/common/finding.h"

namespace sb::binary {

struct PeSection {
  std::string name;  // up to 8 bytes, or the long name from the COFF string table
  std::uint32_t virtual_address = 0, virtual_size = 0;
  std::uint32_t raw_offset = 0, raw_size = 0;
};

struct PeInfo {
  std::uint16_t machine_code = 0;
  std::string machine;   // "AMD64", "ARM64", "I386", or "0x<hex>"
  std::string platform;  // "win_amd64", "win_arm64", "win32", empty when unknown
  bool pe32_plus = false;
  bool is_dll = false;
  std::vector<PeSection> sections;
  std::vector<std::string> imports;        // DLL names, in directory order
  std::vector<std::string> delay_imports;  // delay-loaded DLL names
};

struct PeLimits {
  std::uint64_t max_sections = 96;  // the loader's own limit
  std::uint64_t max_imports = 10'000;
};

class PeFile {
 public:
  // Returns nullptr (with a P8 finding saying what the input is) when it is
  // not a PE image; malformed import tables are P8 findings.
  static std::unique_ptr<PeFile> parse(ByteSource& source, Findings& out, PeLimits limits = {});
  const PeInfo& info() const { return info_; }
  const PeSection* section(std::string_view name) const;
  // File offset of a relative virtual address, if some section's raw data
  // maps it; `room` gets the bytes left in that section from there.
  bool rva_to_offset(std::uint32_t rva, std::uint64_t& offset, std::uint64_t* room = nullptr) const;

 private:
  explicit PeFile(ByteSource& source) : source_(source) {}
  ByteSource& source_;
  PeInfo info_;
  friend class PeParser;
};

}  // namespace sb::binary
