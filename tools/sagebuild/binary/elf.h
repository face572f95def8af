// ELF64 little-endian reader for the native libraries inside wheels (and
// the cubins inside CUDA fatbins): machine, dynamic section, symbols with
// their GNU version requirements, the x86 ISA-level property, and section
// lookup.  Reads through a ByteSource, bounds-checks every offset and caps
// every table, so a hostile file costs at most ElfLimits of memory.
// Other ELF flavours (ELF32, big-endian) are identified, not parsed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/common/finding.h"

namespace sb::binary {

struct ElfLimits {
  std::uint64_t max_sections = 65535;
  std::uint64_t max_segments = 65535;
  std::uint64_t max_symbols = 2'000'000;
  std::uint64_t max_string_table = 64ull << 20;  // bytes per string table
  std::uint64_t max_dynamic_entries = 100'000;
  std::uint64_t max_verneed_entries = 10'000;  // files and versions together
  std::uint64_t max_note_bytes = 1ull << 20;
  std::uint64_t max_property_notes = 16;  // .note.gnu.property sections read
  std::uint64_t max_name = 64 * 1024;     // bytes of one symbol or library name
  // Everything the reader allocates for one file (tables read, symbols and
  // the names copied out of string tables) together: the caps above each
  // hold, yet a million symbols all naming the same 64 KiB string would
  // still be 64 GB.  Past this, tables are cut short with a P8 finding.
  // libtorch_cpu.so (79k dynamic symbols, 5.5 MB of names) needs 20 MB.
  std::uint64_t max_memory = 64ull << 20;
};

// What the first 20 bytes say, for any ELF flavour.
struct ElfIdent {
  bool is_elf = false;
  bool is_64 = false;
  bool little_endian = false;
  std::uint16_t type = 0;          // ET_REL 1, ET_EXEC 2, ET_DYN 3
  std::uint16_t machine_code = 0;  // e_machine
  std::string machine;             // platform-tag spelling: "x86_64", "aarch64", "i686" ...
  std::string describe() const;    // "ELF32 big-endian ppc" ...
};

// Platform-tag spelling of an e_machine value ("em_<n>" when unknown).
std::string elf_machine_name(std::uint16_t machine, bool is_64, bool little_endian);

struct ElfSection {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0, addr = 0, offset = 0, size = 0, entsize = 0;
  std::uint32_t link = 0, info = 0;
  bool has_file_data() const { return type != 8; }  // SHT_NOBITS occupies no bytes
};

enum class SymbolBinding { Local, Global, Weak, Unique, Other };

struct ElfSymbol {
  std::string name;
  SymbolBinding binding = SymbolBinding::Local;
  std::uint8_t type = 0;        // STT_FUNC 2, STT_OBJECT 1 ...
  std::uint8_t visibility = 0;  // STV_DEFAULT 0 ... STV_PROTECTED 3
  std::uint8_t other = 0;       // st_other whole (CUDA cubins: 0x10 marks kernel entries)
  std::uint16_t section = 0;    // st_shndx; 0 = undefined
  std::uint64_t value = 0, size = 0;
  std::string version;       // required version for undefined ("GLIBC_2.17"), else empty
  std::string version_file;  // the library that version belongs to ("libc.so.6")
  bool defined() const { return section != 0; }
};

struct ElfVersionNeed {
  std::string file;                   // "libc.so.6"
  std::vector<std::string> versions;  // "GLIBC_2.17", ...
};

struct ElfInfo {
  ElfIdent ident;
  std::vector<ElfSection> sections;
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::string soname;
  std::vector<std::string> rpath, runpath;  // split on ':'
  std::vector<ElfSymbol> dynamic_symbols;   // .dynsym (index 0 dropped)
  std::vector<ElfVersionNeed> version_needs;
  // x86-64 micro-architecture level the GNU property note says the code
  // needs (1 = baseline, 2 = v2, 3 = v3, 4 = v4); absent without the note.
  std::optional<int> x86_isa_level;
};

class ElfFile {
 public:
  // Parses an ELF64 little-endian file.  Returns nullptr when the input is
  // not one (a P8 finding says what it is instead); structural problems in a
  // parsable file become P8 findings and the affected table is left empty.
  // `source` must outlive the ElfFile.
  static std::unique_ptr<ElfFile> parse(ByteSource& source, Findings& out, ElfLimits limits = {});

  const ElfInfo& info() const { return info_; }
  const ElfSection* section(std::string_view name) const;
  ByteSource& source() { return source_; }

  // Undefined dynamic symbols (imports) and defined, default- or
  // protected-visibility global/weak ones (exports).
  std::vector<const ElfSymbol*> undefined_symbols() const;
  std::vector<std::string> exported_symbols() const;

  // The static symbol table (.symtab), read on demand: cubins keep their
  // kernels there.  Empty (with a finding) when absent or malformed.
  std::vector<ElfSymbol> static_symbols(Findings& out) const;

  // Charges `bytes` of allocation against limits().max_memory; false (with
  // one P8 finding per file) once the budget is spent.  For the reader's
  // own helpers.
  bool charge(std::uint64_t bytes, Findings& out) const;
  const ElfLimits& limits() const { return limits_; }

 private:
  ElfFile(ByteSource& source, ElfLimits limits) : source_(source), limits_(limits) {}
  std::vector<ElfSymbol> read_symbols(const ElfSection& table, Findings& out) const;
  ByteSource& source_;
  ElfLimits limits_;
  ElfInfo info_;
  mutable std::uint64_t spent_ = 0;
  mutable bool overspent_ = false;
  friend class ElfParser;
};

// Reads the identification bytes of any ELF flavour.
ElfIdent identify_elf(ByteSource& source);

}  // namespace sb::binary
