// The central directory: one header per member, with the extra fields that
// change what the header means (ZIP64 sizes, Info-ZIP unicode path).
#include <string>
#include <vector>

#include <zlib.h>

#include "sagebuild/archive/zip_format.h"
#include "sagebuild/archive/zip_names.h"
#include "sagebuild/archive/zip_parse.h"
#include "sagebuild/binary/le.h"

namespace sb::zip::detail {

using binary::le16;
using binary::le32;
using binary::le64;
using namespace format;

namespace {

// APPNOTE 4.5.3: the ZIP64 extra holds, in this order, only the fields
// whose header value is the 0xFFFFFFFF (0xFFFF for the disk) marker.
void apply_zip64(const std::uint8_t* p, std::uint16_t size, Entry& e, EntryState& st, std::uint16_t disk,
                 Findings& out) {
  std::uint64_t* fields[] = {&e.uncompressed_size, &e.compressed_size, &e.local_header_offset};
  std::uint64_t need = 0, at = 0;
  for (auto* f : fields)
    if (*f == kZip64Marker32) need += 8;
  if (disk == 0xFFFF) need += 4;
  if (size < need) {
    add(out, "Z1", Severity::Error, e.name,
        "ZIP64 extra field holds " + std::to_string(size) + " bytes, needs " + std::to_string(need) +
            " for the header fields marked 0xFFFFFFFF",
        "a ZIP64 extra field with every marked size and offset");
    st.refuse = "corrupt ZIP64 extra field";
    return;
  }
  if (size > need)
    add(out, "Z1", Severity::Strict, e.name,
        "ZIP64 extra field holds " + std::to_string(size) + " bytes, but only " + std::to_string(need) +
            " are called for by the header fields marked 0xFFFFFFFF",
        "a ZIP64 extra field with exactly the marked fields (APPNOTE 4.5.3)");
  for (auto* f : fields)
    if (*f == kZip64Marker32) {
      *f = le64(p + at);
      at += 8;
    }
}

// Info-ZIP unicode path (0x7075): version 1, CRC-32 of the header name, the
// UTF-8 name.  Some readers (CPython's zipfile) prefer it over the header
// name, so any disagreement makes the member's name ambiguous.
}  // namespace

void check_unicode_path(const std::uint8_t* p, std::uint16_t size, const Entry& e, Findings& out) {
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(e.name.data()), static_cast<uInt>(e.name.size()));
  if (size < 5 || p[0] != 1 || le32(p + 1) != crc) {
    add(out, "Z6", Severity::Error, e.name,
        "corrupt unicode-path extra field (0x7075, " + std::to_string(size) +
            " bytes): wrong version or CRC-32 of the header name",
        "version 1 and the CRC-32 of the header name, or no unicode-path field");
    return;
  }
  std::string alt(reinterpret_cast<const char*>(p + 5), size - 5);
  if (alt != e.name)
    add(out, "Z6", Severity::Error, e.name,
        "unicode-path extra field names '" + alt + "' but the header names '" + e.name + "'", "one name per member");
}

namespace {

void parse_extras(const std::uint8_t* area, std::uint16_t size, std::uint16_t disk, Entry& e, EntryState& st,
                  Findings& out) {
  std::vector<ExtraField> fields;
  if (!split_extra(area, size, e.name, "central", fields, out)) {
    st.refuse = "corrupt extra field";
    return;
  }
  int zip64 = 0, unicode = 0;
  for (const auto& f : fields) {
    if (f.id == kExtraZip64 && zip64++ == 0) apply_zip64(area + f.offset, f.size, e, st, disk, out);
    if (f.id == kExtraUnicodePath && unicode++ == 0) check_unicode_path(area + f.offset, f.size, e, out);
  }
  if (zip64 > 1 || unicode > 1)
    add(out, "Z6", Severity::Strict, e.name,
        "central header repeats the " + std::string(zip64 > 1 ? "ZIP64" : "unicode-path") + " extra field",
        "at most one extra field of each kind (PyPI rejects duplicates)");
  bool marked = e.compressed_size == kZip64Marker32 || e.uncompressed_size == kZip64Marker32 ||
                e.local_header_offset == kZip64Marker32;
  if (zip64 == 0 && marked && st.refuse.empty()) {
    add(out, "Z1", Severity::Error, e.name, "header sizes marked 0xFFFFFFFF without a ZIP64 extra field",
        "a ZIP64 extra field holding the real values");
    st.refuse = "ZIP64 marker without a ZIP64 extra field";
  }
}

Entry decode_header(const std::uint8_t* p) {
  Entry e;
  e.made_by_os = p[5];
  e.flags = le16(p + 8);
  e.method = le16(p + 10);
  e.crc32 = le32(p + 16);
  e.compressed_size = le32(p + 20);
  e.uncompressed_size = le32(p + 24);
  e.external_attr = le32(p + 38);
  e.local_header_offset = le32(p + 42);
  e.name.assign(reinterpret_cast<const char*>(p + kCentralSize), le16(p + 28));
  return e;
}

void check_entry(const Entry& e, EntryState& st, const Limits& limits, Findings& out) {
  check_member_name(e.name, e.flags & kFlagUtf8, out);
  if (e.is_encrypted()) {
    add(out, "Z9", Severity::Error, e.name, "member is encrypted", "no encrypted members");
    st.refuse = "member is encrypted";
  }
  if (e.method != kStored && e.method != kDeflated) {
    add(out, "Z5", Severity::Error, e.name, "compression method " + std::to_string(e.method),
        "STORED (0) or DEFLATED (8)");
    st.refuse = "unsupported compression method " + std::to_string(e.method);
  }
  if (e.is_symlink())
    add(out, "Z7", Severity::Strict, e.name, "member is a symbolic link (S_IFLNK mode)", "regular files only");
  if (e.flags & kFlagDescriptor)
    add(out, "Z4", Severity::Warning, e.name, "member uses a data descriptor (flag bit 3)",
        "sizes and CRC-32 in the local header (PyPI rejects data descriptors)");
  if (e.uncompressed_size > limits.ratio_applies_above &&
      double(e.uncompressed_size) > limits.max_ratio * double(e.compressed_size))
    add(out, "Z5", Severity::Strict, e.name,
        "declared compression ratio above " + std::to_string(std::uint64_t(limits.max_ratio)) + " (" +
            std::to_string(e.uncompressed_size) + " from " + std::to_string(e.compressed_size) + " bytes)",
        "ratio at most 50 for members over 64 MiB (PyPI)");
  if (e.is_directory() && e.uncompressed_size > 0)
    add(out, "Z6", Severity::Error, e.name,
        "directory entry carries " + std::to_string(e.uncompressed_size) + " bytes of data",
        "directory entries (names ending in '/') with no data");
}

bool check_counts(const EndRecord& end, const Limits& limits, Findings& out) {
  auto fail = [&](std::string msg, std::string expected) {
    add(out, "Z1", Severity::Error, "", std::move(msg), std::move(expected));
    return false;
  };
  if (end.entries > limits.max_members)
    return fail(std::to_string(end.entries) + " members", "at most " + std::to_string(limits.max_members) + " members");
  if (end.cd_size > limits.max_central_directory_bytes)
    return fail("central directory of " + std::to_string(end.cd_size) + " bytes",
                "at most " + std::to_string(limits.max_central_directory_bytes) + " bytes");
  if (end.entries * kCentralSize > end.cd_size)
    return fail("central directory of " + std::to_string(end.cd_size) + " bytes cannot hold " +
                    std::to_string(end.entries) + " entries",
                "at least 46 bytes per entry");
  return true;
}

}  // namespace

bool split_extra(const std::uint8_t* area, std::size_t size, const std::string& member, const char* where,
                 std::vector<ExtraField>& fields, Findings& out) {
  std::size_t pos = 0;
  while (size - pos >= 4) {
    std::uint16_t id = le16(area + pos), len = le16(area + pos + 2);
    if (len > size - pos - 4) {
      add(
          out, "Z1", Severity::Error, member,
          std::string(where) + " extra field 0x" +
              [&] {
                char b[8];
                std::snprintf(b, sizeof b, "%04x", id);
                return std::string(b);
              }() +
              " declares " + std::to_string(len) + " bytes but only " + std::to_string(size - pos - 4) + " remain",
          "extra fields that fit their area");
      return false;
    }
    fields.push_back({id, pos + 4, len});
    pos += 4 + len;
  }
  if (pos != size)
    add(out, "Z1", Severity::Strict, member,
        std::string(where) + " extra-field area ends with " + std::to_string(size - pos) +
            " bytes too short for a field header",
        "an extra-field area made of whole fields");
  return true;
}

bool parse_central_directory(binary::ByteSource& file, const EndRecord& end, const Limits& limits,
                             std::vector<Entry>& entries, std::vector<EntryState>& states, Findings& out) {
  if (!check_counts(end, limits, out)) return false;
  std::vector<std::uint8_t> cd(end.cd_size);
  if (!file.read(end.cd_offset, cd.data(), cd.size())) {
    add(out, "Z1", Severity::Error, "", "cannot read the central directory", "a readable file");
    return false;
  }
  std::uint64_t pos = 0, name_bytes = 0;
  for (std::uint64_t i = 0; i < end.entries; ++i) {
    const std::uint8_t* p = cd.data() + pos;
    if (cd.size() - pos < kCentralSize || le32(p) != kCentralSig) {
      add(out, "Z1", Severity::Error, "",
          "no central-directory header for entry " + std::to_string(i + 1) + " of " + std::to_string(end.entries) +
              " at offset " + std::to_string(end.cd_offset + pos),
          "a central header (PK\\1\\2) per entry the EOCD counts");
      return false;
    }
    std::uint64_t n = le16(p + 28), x = le16(p + 30), c = le16(p + 32);
    if (cd.size() - pos - kCentralSize < n + x + c) {
      add(out, "Z1", Severity::Error, "",
          "central header " + std::to_string(i + 1) + " runs past the end of the central directory",
          "headers inside the central directory's declared size");
      return false;
    }
    if ((name_bytes += n) > limits.max_name_bytes) {
      add(out, "Z1", Severity::Error, "",
          "member names total more than " + std::to_string(limits.max_name_bytes) + " bytes by entry " +
              std::to_string(i + 1),
          "at most " + std::to_string(limits.max_name_bytes) + " bytes of member names");
      return false;
    }
    Entry e = decode_header(p);
    EntryState st;
    parse_extras(p + kCentralSize + n, static_cast<std::uint16_t>(x), le16(p + 34), e, st, out);
    check_entry(e, st, limits, out);
    entries.push_back(std::move(e));
    states.push_back(std::move(st));
    pos += kCentralSize + n + x + c;
  }
  if (pos != cd.size())
    add(out, "Z1", Severity::Error, "",
        std::to_string(cd.size() - pos) + " bytes in the central directory after its " + std::to_string(end.entries) +
            " entries",
        "a central directory exactly as long as the EOCD declares");
  check_name_collisions(entries, out);
  return true;
}

}  // namespace sb::zip::detail
