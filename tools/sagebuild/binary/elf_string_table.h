// The ELF reader's string tables (section names, symbol names, library and
// version names): shared by the parser (elf.cc) and the symbol tables
// (elf_symbols.cc).  Not part of the reader's interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/binary/elf.h"
#include "sagebuild/common/finding.h"

namespace sb::binary {

// A string table read whole (capped); lookups never run past its end, and
// copy at most `max_name` bytes, each charged to the file's memory budget.
class StringTable {
 public:
  StringTable(const ElfFile& f, std::uint64_t max_name, Findings& out) : f_(f), max_name_(max_name), out_(out) {}
  bool load(ByteSource& src, const ElfSection& s, std::uint64_t cap) {
    if (s.size > cap || !s.has_file_data() || !in_bounds(s.offset, s.size, src.size()) || !f_.charge(s.size, out_))
      return false;
    bytes_.resize(s.size);
    return src.read(s.offset, bytes_.data(), bytes_.size());
  }
  // The NUL-terminated string at `off` (cut at max_name); nullopt once the
  // memory budget is spent.
  std::optional<std::string> at(std::uint64_t off) const {
    if (off >= bytes_.size()) return std::string();
    std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(bytes_.size() - off, max_name_));
    const char* p = bytes_.data() + off;
    const void* nul = std::memchr(p, '\0', room);
    std::size_t len = nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - p) : room;
    if (!f_.charge(len, out_)) return std::nullopt;
    return std::string(p, len);
  }

 private:
  const ElfFile& f_;
  std::uint64_t max_name_;
  Findings& out_;
  std::vector<char> bytes_;
};

}  // namespace sb::binary
