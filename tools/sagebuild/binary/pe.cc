#include "sagebuild/binary/pe.h"

#include <cstdio>

#include "sagebuild/binary/le.h"
#include "sagebuild/binary/unreadable.h"

namespace sb::binary {

namespace {

constexpr std::uint16_t kPe32 = 0x10b, kPe32Plus = 0x20b;
constexpr std::uint16_t kDllFlag = 0x2000;
constexpr int kImportDir = 1, kDelayImportDir = 13;
constexpr std::size_t kMaxName = 512;

void name_machine(PeInfo& info) {
  switch (info.machine_code) {
    case 0x8664:
      info.machine = "AMD64";
      info.platform = "win_amd64";
      break;
    case 0xAA64:
      info.machine = "ARM64";
      info.platform = "win_arm64";
      break;
    case 0x014C:
      info.machine = "I386";
      info.platform = "win32";
      break;
    default: {
      char b[16];
      std::snprintf(b, sizeof b, "0x%04x", info.machine_code);
      info.machine = b;
    }
  }
}

}  // namespace

class PeParser {
 public:
  PeParser(PeFile& f, Findings& out, const PeLimits& lim) : f_(f), src_(f.source_), out_(out), lim_(lim) {}

  bool run() {
    std::uint8_t dos[64];
    if (!src_.read(0, dos, sizeof dos) || dos[0] != 'M' || dos[1] != 'Z') {
      unreadable(out_, "not a PE image (no MZ header)", "a Windows DLL/.pyd");
      return false;
    }
    std::uint64_t pe = le32(dos + 0x3c);
    std::uint8_t coff[24];
    if (!src_.read(pe, coff, sizeof coff) || le32(coff) != 0x00004550) {
      unreadable(out_, "MZ file without a PE signature at offset " + std::to_string(pe), "\"PE\\0\\0\" at e_lfanew");
      return false;
    }
    PeInfo& info = f_.info_;
    info.machine_code = le16(coff + 4);
    name_machine(info);
    info.is_dll = le16(coff + 22) & kDllFlag;
    std::uint64_t nsec = le16(coff + 6), opt_size = le16(coff + 20);
    std::uint64_t opt = pe + 24;
    if (!read_sections(opt + opt_size, nsec, le32(coff + 12), le32(coff + 16))) return true;
    read_optional(opt, opt_size);
    return true;
  }

 private:
  bool read_sections(std::uint64_t at, std::uint64_t n, std::uint64_t symtab, std::uint64_t nsyms) {
    if (n > lim_.max_sections || !in_bounds(at, n * 40, src_.size())) {
      unreadable(out_, std::to_string(n) + " section headers at offset " + std::to_string(at) + " do not fit the file",
                 "at most " + std::to_string(lim_.max_sections) + " sections inside the file");
      return false;
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint8_t h[40];
      src_.read(at + i * 40, h, sizeof h);
      PeSection s;
      std::size_t len = 0;
      while (len < 8 && h[len]) ++len;
      s.name.assign(reinterpret_cast<const char*>(h), len);
      if (s.name.size() > 1 && s.name[0] == '/') s.name = long_name(s.name, symtab, nsyms);
      s.virtual_size = le32(h + 8);
      s.virtual_address = le32(h + 12);
      s.raw_size = le32(h + 16);
      s.raw_offset = le32(h + 20);
      f_.info_.sections.push_back(std::move(s));
    }
    return true;
  }

  // "/123": offset 123 in the COFF string table after the symbol table.
  std::string long_name(const std::string& ref, std::uint64_t symtab, std::uint64_t nsyms) {
    std::uint64_t off = 0;
    for (char c : ref.substr(1)) {
      if (c < '0' || c > '9') return ref;
      off = off * 10 + static_cast<std::uint64_t>(c - '0');
    }
    std::string name;
    return symtab && c_string(symtab + nsyms * 18 + off, name) ? name : ref;
  }

  bool c_string(std::uint64_t at, std::string& s) {
    s.clear();
    char c;
    while (s.size() < kMaxName && src_.read(at + s.size(), &c, 1)) {
      if (c == '\0') return true;
      s += c;
    }
    return false;
  }

  void read_optional(std::uint64_t opt, std::uint64_t size) {
    std::uint8_t magic[2];
    if (size < 2 || !src_.read(opt, magic, 2)) return;
    std::uint16_t m = le16(magic);
    if (m != kPe32 && m != kPe32Plus)
      return unreadable(out_, "optional header magic " + std::to_string(m), "0x10b (PE32) or 0x20b (PE32+)");
    PeInfo& info = f_.info_;
    info.pe32_plus = m == kPe32Plus;
    std::uint64_t count_at = info.pe32_plus ? 108 : 92, dirs = count_at + 4;
    std::uint8_t c[4];
    if (size < dirs || !src_.read(opt + count_at, c, 4)) return;
    std::uint64_t count = le32(c);
    auto dir = [&](int i, std::uint32_t& rva, std::uint32_t& len) {
      std::uint8_t d[8];
      if (static_cast<std::uint64_t>(i) >= count || dirs + (i + 1) * 8ull > size ||
          !src_.read(opt + dirs + i * 8ull, d, 8))
        return false;
      rva = le32(d);
      len = le32(d + 4);
      return rva != 0;
    };
    std::uint32_t rva, len;
    if (dir(kImportDir, rva, len)) read_imports(rva, 20, 12, info.imports, "import");
    if (dir(kDelayImportDir, rva, len)) read_imports(rva, 32, 4, info.delay_imports, "delay-load import");
  }

  // Descriptors of `size` bytes, the DLL name's RVA at `name_at`, until an
  // all-zero descriptor.
  void read_imports(std::uint32_t rva, std::uint64_t size, std::uint64_t name_at, std::vector<std::string>& names,
                    const char* what) {
    std::uint64_t at, room;
    if (!f_.rva_to_offset(rva, at, &room))
      return unreadable(out_, std::string(what) + " directory RVA " + std::to_string(rva) + " maps to no section");
    for (std::uint64_t i = 0;; ++i) {
      std::uint8_t d[32] = {};
      if (i >= lim_.max_imports || (i + 1) * size > room || !src_.read(at + i * size, d, size))
        return unreadable(out_, std::string(what) + " directory has no terminating entry",
                          "an all-zero descriptor at the end");
      bool zero = true;
      for (std::uint64_t k = 0; k < size; ++k) zero = zero && d[k] == 0;
      if (zero) return;
      std::uint64_t name_off;
      std::string name;
      if (!f_.rva_to_offset(le32(d + name_at), name_off) || !c_string(name_off, name))
        return unreadable(out_, std::string(what) + " " + std::to_string(i) + " has an unreadable DLL name");
      names.push_back(name);
    }
  }

  PeFile& f_;
  ByteSource& src_;
  Findings& out_;
  const PeLimits& lim_;
};

std::unique_ptr<PeFile> PeFile::parse(ByteSource& source, Findings& out, PeLimits limits) {
  std::unique_ptr<PeFile> f(new PeFile(source));
  PeParser p(*f, out, limits);
  if (!p.run()) return nullptr;
  return f;
}

const PeSection* PeFile::section(std::string_view name) const {
  for (const auto& s : info_.sections)
    if (s.name == name) return &s;
  return nullptr;
}

bool PeFile::rva_to_offset(std::uint32_t rva, std::uint64_t& offset, std::uint64_t* room) const {
  for (const auto& s : info_.sections) {
    if (rva >= s.virtual_address && rva - s.virtual_address < s.raw_size) {
      offset = static_cast<std::uint64_t>(s.raw_offset) + (rva - s.virtual_address);
      if (room) *room = s.raw_size - (rva - s.virtual_address);
      return true;
    }
  }
  return false;
}

}  // namespace sb::binary
