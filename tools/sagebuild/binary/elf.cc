// The ELF64 little-endian parser: section headers, the dynamic section, the
// GNU version requirements, .dynsym, the GNU property notes, each bounded by
// ElfLimits.  Identification of any ELF flavour: elf_ident.cc; the symbol
// tables: elf_symbols.cc.
#include "sagebuild/binary/elf.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "sagebuild/binary/elf_string_table.h"
#include "sagebuild/binary/le.h"
#include "sagebuild/binary/unreadable.h"
#include "sagebuild/common/text.h"

namespace sb::binary {

namespace {

constexpr std::uint32_t kShtDynamic = 6, kShtNote = 7, kShtDynsym = 11;
constexpr std::uint32_t kShtVerneed = 0x6ffffffe, kShtVersym = 0x6fffffff;
constexpr std::int64_t kDtNeeded = 1, kDtSoname = 14, kDtRpath = 15, kDtRunpath = 29;
constexpr std::uint32_t kNtGnuProperty = 5;
constexpr std::uint32_t kX86IsaNeeded = 0xc0008002;  // GNU_PROPERTY_X86_ISA_1_NEEDED

std::vector<std::string> split_path(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto colon = s.find(':', start);
    out.push_back(s.substr(start, colon - start));
    if (colon == std::string::npos) return out;
    start = colon + 1;
  }
}

}  // namespace

class ElfParser {
 public:
  ElfParser(ElfFile& f, Findings& out) : f_(f), src_(f.source_), lim_(f.limits_), out_(out) {}

  bool run() {
    ElfInfo& info = f_.info_;
    info.ident = identify_elf(src_);
    if (!info.ident.is_elf) {
      unreadable(out_, "not an ELF file (no \\x7fELF magic)", "an ELF64 little-endian shared object");
      return false;
    }
    if (!info.ident.is_64 || !info.ident.little_endian || (src_.size() < 64)) {
      unreadable(out_, info.ident.describe() + (src_.size() < 64 ? ", truncated header" : "") + " is not supported",
                 "an ELF64 little-endian file");
      return false;
    }
    read_sections();
    read_dynamic();
    read_version_needs();  // before the symbols, which it annotates
    read_dynsym();
    read_notes();
    return true;
  }

 private:
  StringTable strings() const { return StringTable(f_, lim_.max_name, out_); }

  const ElfSection* linked(const ElfSection& s) const {
    const auto& secs = f_.info_.sections;
    return s.link < secs.size() ? &secs[s.link] : nullptr;
  }

  bool load_strings(const ElfSection* s, StringTable& t, const char* what) {
    if (s && t.load(src_, *s, lim_.max_string_table)) return true;
    unreadable(out_, std::string("unreadable string table for ") + what,
               "a string table inside the file and under " + std::to_string(lim_.max_string_table) + " bytes");
    return false;
  }

  // Reads n fixed-size records of a section, or nothing (with a finding).
  bool table(const ElfSection& s, std::uint64_t entsize, std::uint64_t cap, std::vector<std::uint8_t>& buf,
             std::uint64_t& n) {
    n = s.size / entsize;
    if (n > cap || !in_bounds(s.offset, s.size, src_.size())) {
      unreadable(out_,
                 "section " + clip(s.name) + " (" + std::to_string(s.size) + " bytes at " + std::to_string(s.offset) +
                     ") is out of bounds or over the limit of " + std::to_string(cap) + " entries",
                 "tables inside the file");
      n = 0;
      return false;
    }
    if (!f_.charge(n * entsize, out_)) {
      n = 0;
      return false;
    }
    buf.resize(n * entsize);
    return src_.read(s.offset, buf.data(), buf.size());
  }

  void read_sections() {
    std::uint8_t h[64];
    src_.read(0, h, sizeof h);
    std::uint64_t shoff = le64(h + 40);
    std::uint64_t shnum = le16(h + 60), shstrndx = le16(h + 62);
    if (shoff == 0) return;
    if (le16(h + 58) != 64) return unreadable(out_, "section header size " + std::to_string(le16(h + 58)), "64");
    std::uint8_t first[64];
    if (!src_.read(shoff, first, 64))
      return unreadable(out_, "section headers at " + std::to_string(shoff) + " lie outside the file");
    if (shnum == 0) shnum = le64(first + 32);  // extended numbering
    if (shstrndx == 0xffff) shstrndx = le32(first + 40);
    if (shnum > lim_.max_sections || !in_bounds(shoff, shnum * 64, src_.size()))
      return unreadable(
          out_, std::to_string(shnum) + " section headers at offset " + std::to_string(shoff) + " do not fit the file",
          "section headers inside the file");
    if (!f_.charge(shnum * (64 + sizeof(ElfSection)), out_)) return;
    std::vector<std::uint8_t> raw(shnum * 64);
    if (!src_.read(shoff, raw.data(), raw.size()))
      return unreadable(out_, "section headers at offset " + std::to_string(shoff) + " are unreadable");
    auto& secs = f_.info_.sections;
    std::vector<std::uint32_t> name_offsets;
    for (std::uint64_t i = 0; i < shnum; ++i) {
      const std::uint8_t* p = raw.data() + i * 64;
      ElfSection s;
      s.type = le32(p + 4);
      s.flags = le64(p + 8);
      s.addr = le64(p + 16);
      s.offset = le64(p + 24);
      s.size = le64(p + 32);
      s.link = le32(p + 40);
      s.info = le32(p + 44);
      s.entsize = le64(p + 56);
      name_offsets.push_back(le32(p));
      secs.push_back(s);
    }
    StringTable names = strings();
    if (shstrndx >= secs.size() || !load_strings(&secs[shstrndx], names, "section names")) return;
    for (std::size_t i = 0; i < secs.size(); ++i) {
      auto name = names.at(name_offsets[i]);
      if (!name) return;
      secs[i].name = std::move(*name);
    }
  }

  const ElfSection* first_of_type(std::uint32_t type) const {
    for (const auto& s : f_.info_.sections)
      if (s.type == type) return &s;
    return nullptr;
  }

  void read_dynamic() {
    const ElfSection* dyn = first_of_type(kShtDynamic);
    StringTable strs = strings();
    std::vector<std::uint8_t> buf;
    std::uint64_t n;
    if (!dyn || !table(*dyn, 16, lim_.max_dynamic_entries, buf, n) || !load_strings(linked(*dyn), strs, ".dynamic"))
      return;
    ElfInfo& info = f_.info_;
    for (std::uint64_t i = 0; i < n; ++i) {
      auto tag = static_cast<std::int64_t>(le64(&buf[i * 16]));
      std::uint64_t val = le64(&buf[i * 16 + 8]);
      if (tag == 0) break;
      if (tag != kDtNeeded && tag != kDtSoname && tag != kDtRpath && tag != kDtRunpath) continue;
      auto text = strs.at(val);
      if (!text) return;
      if (tag == kDtNeeded) info.needed.push_back(std::move(*text));
      if (tag == kDtSoname) info.soname = std::move(*text);
      if (tag == kDtRpath) info.rpath = split_path(*text);
      if (tag == kDtRunpath) info.runpath = split_path(*text);
    }
  }

  void read_dynsym() {
    const ElfSection* sym = first_of_type(kShtDynsym);
    if (!sym) return;
    auto syms = f_.read_symbols(*sym, out_);
    std::vector<std::uint16_t> versym = read_versym(syms.size() + 1);
    auto needs = version_index();
    for (std::size_t i = 0; i < syms.size(); ++i) {
      if (i + 1 < versym.size()) {
        auto it = needs.find(versym[i + 1] & 0x7fff);
        if (it != needs.end() && !syms[i].defined()) {
          syms[i].version_file = it->second.first;
          syms[i].version = it->second.second;
        }
      }
    }
    f_.info_.dynamic_symbols = std::move(syms);
  }

  std::vector<std::uint16_t> read_versym(std::uint64_t count) {
    std::vector<std::uint16_t> out;
    const ElfSection* vs = first_of_type(kShtVersym);
    std::vector<std::uint8_t> buf;
    std::uint64_t n;
    if (!vs || !table(*vs, 2, lim_.max_symbols, buf, n)) return out;
    for (std::uint64_t i = 0; i < std::min(n, count); ++i) out.push_back(le16(&buf[i * 2]));
    return out;
  }

  // version index (vna_other) -> (file, version name)
  std::map<std::uint16_t, std::pair<std::string, std::string>> version_index() {
    std::map<std::uint16_t, std::pair<std::string, std::string>> out;
    for (const auto& need : needs_)
      for (const auto& [idx, name] : need.second) out[idx] = {need.first, name};
    return out;
  }

  // .gnu.version_r: a chain of files, each with a chain of versions.  Both
  // chains come from the file, so one count bounds them together, and it is
  // checked before each step (never decremented past zero).
  void read_version_needs() {
    const ElfSection* vr = first_of_type(kShtVerneed);
    StringTable strs = strings();
    std::vector<std::uint8_t> buf;
    if (!vr || vr->size > lim_.max_string_table || !in_bounds(vr->offset, vr->size, src_.size()) ||
        !load_strings(linked(*vr), strs, ".gnu.version_r") || !f_.charge(vr->size, out_))
      return;
    buf.resize(vr->size);
    if (!src_.read(vr->offset, buf.data(), buf.size())) return;
    std::uint64_t at = 0, steps = 0;
    auto step = [&] {
      if (steps++ < lim_.max_verneed_entries) return true;
      unreadable(out_, ".gnu.version_r holds more than " + std::to_string(lim_.max_verneed_entries) + " entries",
                 "a version-needs chain of ordinary length");
      return false;
    };
    for (std::uint64_t k = 0; k < vr->info; ++k) {
      if (!step()) return;
      if (!in_bounds(at, 16, buf.size())) return unreadable(out_, ".gnu.version_r entry runs past its section");
      const std::uint8_t* p = &buf[at];
      auto file = strs.at(le32(p + 4));
      if (!file) return;
      ElfVersionNeed need{std::move(*file), {}};
      std::vector<std::pair<std::uint16_t, std::string>> idx;
      std::uint64_t aux = at + le32(p + 8);
      for (std::uint16_t j = 0; j < le16(p + 2); ++j) {
        if (!step()) return;
        if (!in_bounds(aux, 16, buf.size())) return unreadable(out_, ".gnu.version_r aux entry runs past its section");
        auto name = strs.at(le32(&buf[aux + 8]));
        if (!name) return;
        need.versions.push_back(*name);
        idx.emplace_back(le16(&buf[aux + 6]), std::move(*name));
        std::uint32_t next = le32(&buf[aux + 12]);
        if (next == 0) break;
        aux += next;
      }
      needs_.emplace_back(need.file, std::move(idx));
      f_.info_.version_needs.push_back(std::move(need));
      std::uint32_t next = le32(p + 12);
      if (next == 0) break;
      at += next;
    }
  }

  // The GNU property notes, in file order (a deflated member is read
  // forward), at most max_property_notes of them.
  void read_notes() {
    std::vector<const ElfSection*> notes;
    for (const auto& s : f_.info_.sections)
      if (s.type == kShtNote && s.name == ".note.gnu.property") notes.push_back(&s);
    if (notes.size() > lim_.max_property_notes) {
      unreadable(out_, std::to_string(notes.size()) + " .note.gnu.property sections", "one");
      notes.resize(lim_.max_property_notes);
    }
    std::sort(notes.begin(), notes.end(),
              [](const ElfSection* a, const ElfSection* b) { return a->offset < b->offset; });
    for (const ElfSection* s : notes) {
      if (s->size > lim_.max_note_bytes || !in_bounds(s->offset, s->size, src_.size())) continue;
      std::vector<std::uint8_t> buf(s->size);
      if (src_.read(s->offset, buf.data(), buf.size())) parse_property_notes(buf);
    }
  }

  // Notes: namesz, descsz, type, name (4-aligned), desc (8-aligned in
  // ELF64).  Properties inside: type, datasz, data (8-aligned).
  void parse_property_notes(const std::vector<std::uint8_t>& b) {
    std::uint64_t at = 0;
    while (in_bounds(at, 12, b.size())) {
      std::uint64_t namesz = le32(&b[at]), descsz = le32(&b[at + 4]), type = le32(&b[at + 8]);
      std::uint64_t desc = at + 12 + ((namesz + 3) & ~3ull);
      if (!in_bounds(desc, descsz, b.size())) return;
      bool gnu = namesz == 4 && std::equal(&b[at + 12], &b[at + 16], "GNU");
      if (gnu && type == kNtGnuProperty) parse_properties(&b[desc], descsz);
      at = desc + ((descsz + 7) & ~7ull);
    }
  }

  void parse_properties(const std::uint8_t* p, std::uint64_t size) {
    std::uint64_t at = 0;
    while (in_bounds(at, 8, size)) {
      std::uint32_t type = le32(p + at), datasz = le32(p + at + 4);
      if (!in_bounds(at + 8, datasz, size)) return;
      if (type == kX86IsaNeeded && datasz >= 4) {
        std::uint32_t bits = le32(p + at + 8);
        int level = 0;
        for (int b = 0; b < 4; ++b)
          if (bits & (1u << b)) level = b + 1;  // BASELINE=1, V2=2, V3=4, V4=8
        if (level) f_.info_.x86_isa_level = level;
      }
      at += 8 + ((datasz + 7ull) & ~7ull);
    }
  }

  ElfFile& f_;
  ByteSource& src_;
  const ElfLimits& lim_;
  Findings& out_;
  std::vector<std::pair<std::string, std::vector<std::pair<std::uint16_t, std::string>>>> needs_;
};

bool ElfFile::charge(std::uint64_t bytes, Findings& out) const {
  if (!overspent_ && bytes <= limits_.max_memory - std::min(spent_, limits_.max_memory)) {
    spent_ += bytes;
    return true;
  }
  if (!overspent_)
    unreadable(out,
               "the ELF's tables and names need more than " + std::to_string(limits_.max_memory) +
                   " bytes; the rest of them is not read",
               "tables of ordinary size");
  overspent_ = true;
  return false;
}

std::unique_ptr<ElfFile> ElfFile::parse(ByteSource& source, Findings& out, ElfLimits limits) {
  std::unique_ptr<ElfFile> f(new ElfFile(source, limits));
  ElfParser p(*f, out);
  if (!p.run()) return nullptr;
  return f;
}

const ElfSection* ElfFile::section(std::string_view name) const {
  for (const auto& s : info_.sections)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace sb::binary
