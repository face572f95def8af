#include "sagebuild/platform/pe.h"

#include "sagebuild/platform/win_path.h"

namespace sb::platform {

namespace {

// Field offsets from the PE/COFF specification.
constexpr std::size_t kLfanewOffset = 0x3c;
constexpr std::size_t kCoffHeaderSize = 20;
constexpr std::size_t kSectionHeaderSize = 40;
constexpr std::size_t kImportDescriptorSize = 20;
constexpr std::size_t kSymbolSize = 18;
constexpr std::uint16_t kMagicPe32 = 0x10b;
constexpr std::uint16_t kMagicPe32Plus = 0x20b;
constexpr std::uint16_t kFileDll = 0x2000;
constexpr std::uint32_t kImportDirectory = 1;

// Bounds-checked little-endian reads over the whole input.
class Bytes {
 public:
  explicit Bytes(std::string_view b) : b_(b) {}
  std::uint64_t size() const { return b_.size(); }
  bool has(std::uint64_t off, std::uint64_t n) const { return off <= b_.size() && n <= b_.size() - off; }
  bool u16(std::uint64_t off, std::uint16_t& v) const { return read(off, 2, v); }
  bool u32(std::uint64_t off, std::uint32_t& v) const { return read(off, 4, v); }
  std::string_view view(std::uint64_t off, std::uint64_t n) const { return b_.substr(off, n); }
  // A NUL-terminated string of at most `max` bytes, or nullopt when it runs
  // off the end or is longer.
  std::optional<std::string> cstring(std::uint64_t off, std::size_t max) const {
    if (off >= b_.size()) return std::nullopt;
    std::string_view rest = b_.substr(off, max + 1);
    std::size_t nul = rest.find('\0');
    if (nul == std::string_view::npos) return std::nullopt;
    return std::string(rest.substr(0, nul));
  }

 private:
  template <typename T>
  bool read(std::uint64_t off, std::size_t n, T& v) const {
    if (!has(off, n)) return false;
    v = 0;
    for (std::size_t i = 0; i < n; ++i)
      v |= static_cast<T>(static_cast<std::uint8_t>(b_[off + i])) << (8 * i);
    return true;
  }
  std::string_view b_;
};

struct Headers {
  std::uint64_t coff = 0;            // offset of the COFF file header
  std::uint16_t section_count = 0;
  std::uint32_t symbol_table = 0;
  std::uint32_t symbol_count = 0;
  std::uint16_t optional_size = 0;
  std::uint16_t characteristics = 0;
};

std::string hex16(std::uint16_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 12; shift >= 0; shift -= 4) s += digits[(v >> shift) & 0xf];
  return s;
}

bool read_headers(const Bytes& in, PeImage& img, Headers& h, std::string& error) {
  if (!in.has(0, 2) || in.view(0, 2) != "MZ") {
    error = "not a PE file: expected the 'MZ' signature at offset 0";
    return false;
  }
  std::uint32_t lfanew = 0;
  if (!in.u32(kLfanewOffset, lfanew)) {
    error = "truncated DOS header: the PE header offset at 0x3c is missing";
    return false;
  }
  if (!in.has(lfanew, 4 + kCoffHeaderSize) || in.view(lfanew, 4) != std::string_view("PE\0\0", 4)) {
    error = "not a PE file: expected 'PE\\0\\0' at offset " + std::to_string(lfanew) +
            " (from the DOS header), found end of file or other bytes";
    return false;
  }
  h.coff = lfanew + 4ull;
  in.u16(h.coff, img.machine);
  in.u16(h.coff + 2, h.section_count);
  in.u32(h.coff + 8, h.symbol_table);
  in.u32(h.coff + 12, h.symbol_count);
  in.u16(h.coff + 16, h.optional_size);
  in.u16(h.coff + 18, h.characteristics);
  img.is_dll = (h.characteristics & kFileDll) != 0;
  return true;
}

// The import directory's RVA from the optional header (0 when absent).
bool read_import_rva(const Bytes& in, const Headers& h, PeImage& img, std::uint32_t& rva,
                     std::string& error) {
  std::uint64_t opt = h.coff + kCoffHeaderSize;
  std::uint16_t magic = 0;
  if (h.optional_size < 2 || !in.u16(opt, magic)) {
    error = "no optional header: expected an image (.dll/.pyd/.exe), not an object file";
    return false;
  }
  if (magic != kMagicPe32 && magic != kMagicPe32Plus) {
    error = "unknown optional header magic " + hex16(magic) + "; expected 0x10b or 0x20b";
    return false;
  }
  img.pe32_plus = magic == kMagicPe32Plus;
  std::uint64_t count_at = opt + (img.pe32_plus ? 108 : 92);
  std::uint64_t dirs_at = count_at + 4;
  std::uint32_t count = 0;
  rva = 0;
  // Directories must lie inside the declared optional header, too.
  std::uint64_t opt_end = opt + h.optional_size;
  if (!in.u32(count_at, count) || count_at + 4 > opt_end) return true;
  std::uint64_t entry = dirs_at + 8ull * kImportDirectory;
  if (count > kImportDirectory && entry + 8 <= opt_end) in.u32(entry, rva);
  return true;
}

std::string section_name(const Bytes& in, const Headers& h, std::string_view raw,
                         const PeLimits& limits) {
  std::string name(raw.substr(0, raw.find('\0')));
  // "/123": a long name at offset 123 of the COFF string table, which
  // follows the symbol table (MinGW writes these; MSVC truncates instead).
  if (name.size() < 2 || name[0] != '/' || h.symbol_table == 0) return name;
  std::uint64_t offset = 0;
  for (char c : name.substr(1)) {
    if (c < '0' || c > '9') return name;
    offset = offset * 10 + static_cast<unsigned>(c - '0');
  }
  std::uint64_t strings = h.symbol_table + std::uint64_t(h.symbol_count) * kSymbolSize;
  auto long_name = in.cstring(strings + offset, limits.max_name_length);
  return long_name ? *long_name : name;
}

bool read_sections(const Bytes& in, const Headers& h, PeImage& img, const PeLimits& limits,
                   std::string& error) {
  if (h.section_count > limits.max_sections) {
    error = std::to_string(h.section_count) + " sections declared; at most " +
            std::to_string(limits.max_sections) + " expected";
    return false;
  }
  std::uint64_t table = h.coff + kCoffHeaderSize + h.optional_size;
  if (!in.has(table, std::uint64_t(h.section_count) * kSectionHeaderSize)) {
    error = "truncated section table: " + std::to_string(h.section_count) +
            " section headers declared at offset " + std::to_string(table) +
            " run past the end of the file";
    return false;
  }
  for (std::uint16_t i = 0; i < h.section_count; ++i) {
    std::uint64_t at = table + std::uint64_t(i) * kSectionHeaderSize;
    PeSection s;
    s.name = section_name(in, h, in.view(at, 8), limits);
    in.u32(at + 8, s.virtual_size);
    in.u32(at + 12, s.virtual_address);
    in.u32(at + 16, s.raw_size);
    in.u32(at + 20, s.raw_offset);
    img.sections.push_back(std::move(s));
  }
  return true;
}

// The file offset holding `rva`, if a section maps it to bytes in the file.
std::optional<std::uint64_t> rva_to_offset(const PeImage& img, const Bytes& in, std::uint32_t rva) {
  for (const auto& s : img.sections) {
    if (rva < s.virtual_address) continue;
    std::uint64_t delta = rva - s.virtual_address;
    if (delta >= s.raw_size) continue;
    std::uint64_t off = std::uint64_t(s.raw_offset) + delta;
    if (off < in.size()) return off;
  }
  return std::nullopt;
}

bool read_imports(const Bytes& in, std::uint32_t rva, PeImage& img, const PeLimits& limits,
                  std::string& error) {
  if (rva == 0) return true;  // imports nothing
  auto table = rva_to_offset(img, in, rva);
  if (!table) {
    error = "the import directory's address is not inside any section's file data";
    return false;
  }
  for (std::size_t i = 0;; ++i) {
    if (i == limits.max_imports) {
      error = "more than " + std::to_string(limits.max_imports) +
              " import descriptors without the terminating null entry";
      return false;
    }
    std::uint64_t at = *table + i * kImportDescriptorSize;
    if (!in.has(at, kImportDescriptorSize)) {
      error = "truncated import directory: it runs past the end of the file before its null entry";
      return false;
    }
    std::uint32_t name_rva = 0, first_thunk = 0;
    in.u32(at + 12, name_rva);
    in.u32(at + 16, first_thunk);
    if (name_rva == 0 && first_thunk == 0) return true;  // the null terminator
    auto name_at = rva_to_offset(img, in, name_rva);
    auto name = name_at ? in.cstring(*name_at, limits.max_name_length) : std::nullopt;
    if (!name) {
      error = "import descriptor " + std::to_string(i) +
              ": its DLL name is outside the file or not NUL-terminated";
      return false;
    }
    img.imported_dlls.push_back(std::move(*name));
  }
}

}  // namespace

std::optional<std::string> platform_tag_for_machine(std::uint16_t machine) {
  switch (static_cast<PeMachine>(machine)) {
    case PeMachine::Amd64: return "win_amd64";
    case PeMachine::Arm64: return "win_arm64";
    case PeMachine::I386: return "win32";
  }
  return std::nullopt;
}

const PeSection* PeImage::find_section(std::string_view name) const {
  for (const auto& s : sections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool PeImage::imports(std::string_view dll) const {
  for (const auto& d : imported_dlls) {
    if (win_iequals(d, dll)) return true;
  }
  return false;
}

PeParse parse_pe(std::string_view bytes, PeLimits limits) {
  Bytes in(bytes);
  PeParse out;
  PeImage img;
  Headers h;
  std::uint32_t import_rva = 0;
  if (!read_headers(in, img, h, out.error) || !read_import_rva(in, h, img, import_rva, out.error) ||
      !read_sections(in, h, img, limits, out.error) ||
      !read_imports(in, import_rva, img, limits, out.error)) {
    return out;
  }
  out.image = std::move(img);
  return out;
}

}  // namespace sb::platform
