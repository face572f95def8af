// An ELF file's symbol tables: .dynsym's imports and exports, and the
// static .symtab read on demand (cubins keep their kernels there).
#include <string>
#include <vector>

#include "sagebuild/binary/elf.h"
#include "sagebuild/binary/elf_string_table.h"
#include "sagebuild/binary/le.h"
#include "sagebuild/common/text.h"

namespace sb::binary {

namespace {

constexpr std::uint32_t kShtSymtab = 2;

SymbolBinding binding_of(std::uint8_t info) {
  switch (info >> 4) {
    case 0:
      return SymbolBinding::Local;
    case 1:
      return SymbolBinding::Global;
    case 2:
      return SymbolBinding::Weak;
    case 10:
      return SymbolBinding::Unique;
    default:
      return SymbolBinding::Other;
  }
}

}  // namespace

std::vector<ElfSymbol> ElfFile::read_symbols(const ElfSection& s, Findings& out) const {
  std::vector<ElfSymbol> syms;
  std::uint64_t n = s.entsize == 24 ? s.size / 24 : 0;
  if (n == 0 || n > limits_.max_symbols || !in_bounds(s.offset, s.size, source_.size())) {
    if (s.size)
      add(out, "P8", Severity::Error, "",
          "symbol table " + clip(s.name) + " is malformed or over " + std::to_string(limits_.max_symbols) + " entries",
          "24-byte symbols inside the file");
    return syms;
  }
  StringTable strs(*this, limits_.max_name, out);
  if (s.link >= info_.sections.size() || !strs.load(source_, info_.sections[s.link], limits_.max_string_table)) {
    add(out, "P8", Severity::Error, "", "unreadable string table for " + clip(s.name));
    return syms;
  }
  if (!charge(n * (24 + sizeof(ElfSymbol)), out)) return syms;
  std::vector<std::uint8_t> buf(n * 24);
  if (!source_.read(s.offset, buf.data(), buf.size())) return syms;
  syms.reserve(n);
  for (std::uint64_t i = 1; i < n; ++i) {  // entry 0 is the reserved null symbol
    const std::uint8_t* p = &buf[i * 24];
    auto name = strs.at(le32(p));
    if (!name) break;  // the memory budget is spent (P8 said so): keep what was read
    ElfSymbol sym;
    sym.name = std::move(*name);
    sym.binding = binding_of(p[4]);
    sym.type = p[4] & 0xf;
    sym.visibility = p[5] & 3;
    sym.other = p[5];
    sym.section = le16(p + 6);
    sym.value = le64(p + 8);
    sym.size = le64(p + 16);
    syms.push_back(std::move(sym));
  }
  return syms;
}

std::vector<const ElfSymbol*> ElfFile::undefined_symbols() const {
  std::vector<const ElfSymbol*> out;
  for (const auto& s : info_.dynamic_symbols)
    if (!s.defined() && !s.name.empty()) out.push_back(&s);
  return out;
}

std::vector<std::string> ElfFile::exported_symbols() const {
  std::vector<std::string> out;
  for (const auto& s : info_.dynamic_symbols) {
    bool visible = s.visibility == 0 || s.visibility == 3;
    bool global =
        s.binding == SymbolBinding::Global || s.binding == SymbolBinding::Weak || s.binding == SymbolBinding::Unique;
    if (s.defined() && visible && global && !s.name.empty()) out.push_back(s.name);
  }
  return out;
}

std::vector<ElfSymbol> ElfFile::static_symbols(Findings& out) const {
  for (const auto& s : info_.sections)
    if (s.type == kShtSymtab) return read_symbols(s, out);
  add(out, "P8", Severity::Warning, "", "no .symtab section (stripped)", "a symbol table");
  return {};
}

}  // namespace sb::binary
