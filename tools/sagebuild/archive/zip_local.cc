// Local headers, data descriptors, and the layout of the whole file: every
// byte must belong to exactly one record (Z1, Z2, Z3).  Overlapping member
// data is how "quoted overlap" zip bombs multiply their output, so such
// members are refused rather than read.
#include <algorithm>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_format.h"
#include "sagebuild/archive/zip_parse.h"
#include "sagebuild/binary/le.h"

namespace sb::zip::detail {

using binary::le16;
using binary::le32;
using binary::le64;
using namespace format;

namespace {

// Bit 3 may legitimately be set in the local header only: it tells a
// streaming reader to look for a descriptor, which the central directory
// no longer needs (malo's accept/data_descriptor.zip does exactly that).
constexpr std::uint16_t kCompared = kFlagEncrypted | kFlagUtf8;

struct Local {
  std::uint16_t flags = 0, method = 0;
  std::uint32_t crc = 0;
  std::uint64_t csize = 0, usize = 0;
  bool zip64 = false;  // has a ZIP64 extra: its descriptor has 8-byte sizes
  std::string name;
  std::vector<std::uint8_t> extra;
  bool descriptor() const { return flags & kFlagDescriptor; }
};

struct Span {
  std::uint64_t start, end;
  long index;  // member index, -1 for the central directory and end records
};

bool read_local(binary::ByteSource& file, std::uint64_t at, Local& l) {
  std::uint8_t h[kLocalSize];
  if (!file.read(at, h, sizeof h) || le32(h) != kLocalSig) return false;
  l.flags = le16(h + 6);
  l.method = le16(h + 8);
  l.crc = le32(h + 14);
  l.csize = le32(h + 18);
  l.usize = le32(h + 22);
  l.name.resize(le16(h + 26));
  l.extra.resize(le16(h + 28));
  return file.read(at + kLocalSize, l.name.data(), l.name.size()) &&
         file.read(at + kLocalSize + l.name.size(), l.extra.data(), l.extra.size());
}

// Local extras: duplicates (Z6), the unicode path, and ZIP64 sizes, which
// in a local header come as uncompressed then compressed size.
void local_extras(Local& l, const Entry& e, Findings& out) {
  std::vector<ExtraField> fields;
  if (!split_extra(l.extra.data(), l.extra.size(), e.name, "local", fields, out)) return;
  int zip64 = 0, unicode = 0;
  for (const auto& f : fields) {
    const std::uint8_t* p = l.extra.data() + f.offset;
    if (f.id == kExtraUnicodePath && unicode++ == 0) check_unicode_path(p, f.size, e, out);
    if (f.id != kExtraZip64 || zip64++ != 0) continue;
    l.zip64 = true;
    std::uint16_t at = 0;
    for (auto* v : {&l.usize, &l.csize})
      if (*v == kZip64Marker32 && f.size >= at + 8) {
        *v = le64(p + at);
        at += 8;
      }
  }
  if (zip64 > 1 || unicode > 1)
    add(out, "Z6", Severity::Strict, e.name,
        "local header repeats the " + std::string(zip64 > 1 ? "ZIP64" : "unicode-path") + " extra field",
        "at most one extra field of each kind (PyPI rejects duplicates)");
}

void compare_sizes(const Local& l, const Entry& e, EntryState& st, Findings& out) {
  bool descriptor = l.descriptor();
  auto differs = [&](std::uint64_t local, std::uint64_t central) {
    return local != central && !(descriptor && local == 0);
  };
  if (differs(l.crc, e.crc32) || differs(l.csize, e.compressed_size) || differs(l.usize, e.uncompressed_size)) {
    add(out, "Z2", Severity::Error, e.name,
        "local header says CRC-32 " + std::to_string(l.crc) + ", sizes " + std::to_string(l.csize) + "/" +
            std::to_string(l.usize) + "; central directory says " + std::to_string(e.crc32) + ", " +
            std::to_string(e.compressed_size) + "/" + std::to_string(e.uncompressed_size),
        "the same CRC-32 and sizes in both headers");
    st.refuse = "local header and central directory disagree on CRC-32 or sizes";
  }
}

// Length of the data descriptor after the member's data, checking it
// against the central directory; 0 when the member has none.
std::uint64_t check_descriptor(binary::ByteSource& file, const Entry& e, const Local& l, std::uint64_t at,
                               Findings& out) {
  if (!l.descriptor()) return 0;
  std::uint8_t d[24] = {};
  std::uint64_t avail = std::min<std::uint64_t>(24, file.size() > at ? file.size() - at : 0);
  if (avail < 12 || !file.read(at, d, avail)) {
    add(out, "Z2", Severity::Error, e.name, "data descriptor missing at offset " + std::to_string(at),
        "a data descriptor after the member's data (flag bit 3)");
    return 0;
  }
  std::uint64_t sig = le32(d) == kDescriptorSig ? 4 : 0;
  bool wide = l.zip64;
  std::uint64_t len = sig + 4 + (wide ? 16 : 8);
  if (len > avail) return 0;
  std::uint32_t crc = le32(d + sig);
  std::uint64_t cs = wide ? le64(d + sig + 4) : le32(d + sig + 4);
  std::uint64_t us = wide ? le64(d + sig + 12) : le32(d + sig + 8);
  if (crc != e.crc32 || cs != e.compressed_size || us != e.uncompressed_size)
    add(out, "Z2", Severity::Error, e.name,
        "data descriptor says CRC-32 " + std::to_string(crc) + ", sizes " + std::to_string(cs) + "/" +
            std::to_string(us) + "; central directory says " + std::to_string(e.crc32) + ", " +
            std::to_string(e.compressed_size) + "/" + std::to_string(e.uncompressed_size),
        "the data descriptor to match the central directory");
  return len;
}

// Checks member i's local header; returns the span of file it occupies.
Span check_member(binary::ByteSource& file, const EndRecord& end, Entry& e, EntryState& st, long i, Findings& out) {
  Local l;
  if (!read_local(file, e.local_header_offset, l)) {
    add(out, "Z3", Severity::Error, e.name, "no local header at offset " + std::to_string(e.local_header_offset),
        "a local header (PK\\3\\4) where the central directory points");
    st.refuse = "missing local header";
    return {e.local_header_offset, e.local_header_offset, -1};
  }
  if (l.name != e.name)
    add(out, "Z3", Severity::Error, e.name, "local header names '" + l.name + "'",
        "the central directory's name '" + e.name + "'");
  if (l.method != e.method || (l.flags & kCompared) != (e.flags & kCompared)) {
    add(out, "Z1", Severity::Error, e.name,
        "local header has method " + std::to_string(l.method) + ", flags " + std::to_string(l.flags) +
            "; central directory has " + std::to_string(e.method) + ", " + std::to_string(e.flags),
        "the same method and flags in both headers");
    st.refuse = "local header and central directory disagree on method or flags";
  }
  local_extras(l, e, out);
  if (l.descriptor() && !(e.flags & kFlagDescriptor))
    add(out, "Z4", Severity::Warning, e.name, "member uses a data descriptor (local flag bit 3)",
        "sizes and CRC-32 in the local header (PyPI rejects data descriptors)");
  compare_sizes(l, e, st, out);
  e.data_offset = e.local_header_offset + kLocalSize + l.name.size() + l.extra.size();
  std::uint64_t data_end = e.data_offset + e.compressed_size;
  if (e.compressed_size > end.cd_offset || e.data_offset > end.cd_offset - e.compressed_size) {
    add(out, "Z1", Severity::Error, e.name,
        "member data [" + std::to_string(e.data_offset) + ", +" + std::to_string(e.compressed_size) +
            ") runs into the central directory at offset " + std::to_string(end.cd_offset),
        "member data before the central directory");
    st.refuse = "member data runs past the end of the member area";
    return {e.local_header_offset, e.data_offset, i};
  }
  return {e.local_header_offset, data_end + check_descriptor(file, e, l, data_end, out), i};
}

void report_gap(binary::ByteSource& file, std::uint64_t from, std::uint64_t to, Findings& out) {
  Local l;
  if (read_local(file, from, l)) {
    add(out, "Z3", Severity::Error, l.name,
        "local header for '" + l.name + "' at offset " + std::to_string(from) +
            " is not listed in the central directory",
        "every local header listed in the central directory");
    return;
  }
  std::string what = from == 0 ? std::to_string(to) + " bytes before the first record"
                               : std::to_string(to - from) + " unaccounted bytes at offset " + std::to_string(from);
  add(out, "Z1", Severity::Strict, "", what,
      "records back to back from offset 0 to the EOCD (PyPI: unknown record signature)");
}

std::string span_name(const Span& s, const std::vector<Entry>& entries) {
  return s.index >= 0 ? "member '" + entries[s.index].name + "'" : "the central directory";
}

void check_tiling(binary::ByteSource& file, std::vector<Span> spans, std::vector<Entry>& entries,
                  std::vector<EntryState>& states, Findings& out) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  std::uint64_t cursor = 0;
  const Span* last = nullptr;
  for (const Span& s : spans) {
    if (s.start > cursor) report_gap(file, cursor, s.start, out);
    if (s.start < cursor && last) {
      add(out, "Z1", Severity::Error, s.index >= 0 ? entries[s.index].name : "",
          span_name(s, entries) + " at offset " + std::to_string(s.start) + " overlaps " + span_name(*last, entries) +
              " (ends at " + std::to_string(cursor) + ")",
          "records that do not overlap (overlapping members are a zip-bomb technique)");
      for (long k : {s.index, last->index})
        if (k >= 0) states[k].refuse = "member data overlaps another record";
    }
    if (s.end > cursor) {
      cursor = s.end;
      last = &s;
    }
  }
}

}  // namespace

void check_local_headers(binary::ByteSource& file, const EndRecord& end, std::vector<Entry>& entries,
                         std::vector<EntryState>& states, Findings& out) {
  std::vector<Span> spans;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    Span s = check_member(file, end, entries[i], states[i], static_cast<long>(i), out);
    if (s.index >= 0) spans.push_back(s);
  }
  spans.push_back({end.cd_offset, end.cd_offset + end.cd_size, -1});
  spans.push_back({end.directory_end, end.eocd_offset + kEocdSize, -1});
  check_tiling(file, std::move(spans), entries, states, out);
}

}  // namespace sb::zip::detail
