// Locating the central directory: the EOCD record at the end of the file
// and, when present, the ZIP64 locator and end record before it (Z1).
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

void z1(Findings& out, Severity sev, std::string msg, std::string expected) {
  add(out, "Z1", sev, "", std::move(msg), std::move(expected));
}

// Offsets (inside `tail`) of every EOCD signature with room for the fixed
// record after it, highest first.
std::vector<std::uint64_t> eocd_signatures(const std::vector<std::uint8_t>& tail) {
  std::vector<std::uint64_t> found;
  for (std::uint64_t i = tail.size() - kEocdSize + 1; i-- > 0;)
    if (le32(&tail[i]) == kEocdSig) found.push_back(i);
  return found;
}

// The record whose comment ends exactly at the end of the file; failing
// that (trailing junk), the last one.
std::uint64_t pick_eocd(const std::vector<std::uint8_t>& tail, const std::vector<std::uint64_t>& sigs) {
  for (std::uint64_t s : sigs)
    if (s + kEocdSize + le16(&tail[s + 20]) == tail.size()) return s;
  return sigs.front();
}

struct Eocd {
  std::uint32_t disk, cd_disk;
  std::uint64_t disk_entries, entries, cd_size, cd_offset;
};

bool read_zip64(binary::ByteSource& file, std::uint64_t locator_pos, const Eocd& eocd, EndRecord& end, Findings& out) {
  std::uint8_t loc[kLocatorSize];
  if (!file.read(locator_pos, loc, sizeof loc)) return false;
  std::uint64_t off = le64(loc + 8);
  if (le32(loc + 4) != 0 || le32(loc + 16) > 1) {
    z1(out, Severity::Error, "ZIP64 locator describes a multi-disk archive", "a single-disk archive");
    return false;
  }
  std::uint8_t rec[kEocd64Size];
  if (!file.read(off, rec, sizeof rec) || le32(rec) != kEocd64Sig) {
    z1(out, Severity::Error,
       "ZIP64 locator at offset " + std::to_string(locator_pos) + " points to offset " + std::to_string(off) +
           ", where no ZIP64 end record starts",
       "the ZIP64 end record at the offset the locator gives");
    return false;
  }
  std::uint64_t rec_size = le64(rec + 4);
  if (rec_size < kEocd64Size - 12 || off + 12 + rec_size != locator_pos) {
    z1(out, Severity::Error,
       "ZIP64 end record at offset " + std::to_string(off) + " declares " + std::to_string(rec_size) +
           " bytes, so it does not end at the locator at offset " + std::to_string(locator_pos),
       "the ZIP64 end record immediately before its locator");
    return false;
  }
  if (rec_size > kEocd64Size - 12)
    z1(out, Severity::Strict, std::to_string(rec_size - (kEocd64Size - 12)) + " bytes of ZIP64 extensible data",
       "no ZIP64 extensible data (PyPI rejects it)");
  Eocd z{le32(rec + 16), le32(rec + 20), le64(rec + 24), le64(rec + 32), le64(rec + 40), le64(rec + 48)};
  auto agree = [&](const char* what, std::uint64_t small, std::uint64_t marker, std::uint64_t big) {
    if (small != marker && small != big)
      z1(out, Severity::Error,
         std::string("EOCD ") + what + " is " + std::to_string(small) + " but the ZIP64 end record says " +
             std::to_string(big),
         "the EOCD and ZIP64 end record to agree");
  };
  agree("entry count", eocd.entries, kZip64Marker16, z.entries);
  agree("central-directory size", eocd.cd_size, kZip64Marker32, z.cd_size);
  agree("central-directory offset", eocd.cd_offset, kZip64Marker32, z.cd_offset);
  if (z.disk != 0 || z.cd_disk != 0 || z.disk_entries != z.entries) {
    z1(out, Severity::Error, "ZIP64 end record describes a multi-disk archive", "a single-disk archive");
    return false;
  }
  end.entries = z.entries;
  end.cd_size = z.cd_size;
  end.cd_offset = z.cd_offset;
  end.directory_end = off;
  end.zip64 = true;
  return true;
}

bool read_eocd(binary::ByteSource& file, const std::vector<std::uint8_t>& tail, std::uint64_t tail_start,
               std::uint64_t s, EndRecord& end, Findings& out) {
  const std::uint8_t* p = &tail[s];
  Eocd e{le16(p + 4), le16(p + 6), le16(p + 8), le16(p + 10), le32(p + 12), le32(p + 16)};
  end.eocd_offset = end.directory_end = tail_start + s;
  end.entries = e.entries;
  end.cd_size = e.cd_size;
  end.cd_offset = e.cd_offset;
  std::uint64_t pos = end.eocd_offset;
  std::uint8_t sig[4];
  if (pos >= kLocatorSize && file.read(pos - kLocatorSize, sig, 4) && le32(sig) == kLocatorSig)
    return read_zip64(file, pos - kLocatorSize, e, end, out);
  if (e.entries == kZip64Marker16 || e.cd_size == kZip64Marker32 || e.cd_offset == kZip64Marker32) {
    z1(out, Severity::Error, "EOCD holds ZIP64 markers (0xFFFF...) but no ZIP64 locator precedes it",
       "a ZIP64 locator and end record before the EOCD");
    return false;
  }
  if (e.disk != 0 || e.cd_disk != 0 || e.disk_entries != e.entries) {
    z1(out, Severity::Error, "EOCD describes a multi-disk archive (disk " + std::to_string(e.disk) + ")",
       "a single-disk archive");
    return false;
  }
  return true;
}

void check_tail(const std::vector<std::uint8_t>& tail, std::uint64_t tail_start, const std::vector<std::uint64_t>& sigs,
                std::uint64_t picked, const EndRecord& end, Findings& out) {
  std::uint64_t comment = le16(&tail[picked + 20]);
  std::uint64_t record_end = picked + kEocdSize + comment;
  if (record_end > tail.size())
    z1(out, Severity::Error,
       "EOCD comment length " + std::to_string(comment) + " runs " + std::to_string(record_end - tail.size()) +
           " bytes past the end of the file",
       "a comment length that ends at the end of the file");
  else if (record_end < tail.size())
    z1(out, Severity::Strict,
       std::to_string(tail.size() - record_end) + " bytes of trailing data after the EOCD record",
       "the file to end with the EOCD record and its comment");
  if (comment > 0)
    z1(out, Severity::Warning, "archive comment of " + std::to_string(comment) + " bytes", "no archive comment");
  std::uint64_t cd_end = end.cd_offset + end.cd_size;
  for (std::uint64_t s : sigs)
    if (s != picked && tail_start + s >= cd_end)
      z1(out, Severity::Error,
         "a second EOCD signature at offset " + std::to_string(tail_start + s) + " (the EOCD used is at " +
             std::to_string(tail_start + picked) + ")",
         "exactly one end-of-central-directory record");
}

}  // namespace

bool find_end_record(binary::ByteSource& file, EndRecord& end, Findings& out) {
  std::uint64_t size = file.size();
  if (size < kEocdSize) {
    z1(out, Severity::Error,
       "not a zip archive: " + std::to_string(size) + " bytes, too short for an end-of-central-directory record",
       "a zip archive ending with an EOCD record (PK\\5\\6)");
    return false;
  }
  std::uint64_t len = std::min<std::uint64_t>(size, kEocdSize + kMaxComment);
  std::vector<std::uint8_t> tail(len);
  if (!file.read(size - len, tail.data(), len)) {
    z1(out, Severity::Error, "cannot read the last " + std::to_string(len) + " bytes", "a readable file");
    return false;
  }
  auto sigs = eocd_signatures(tail);
  if (sigs.empty()) {
    z1(out, Severity::Error,
       "not a zip archive: no end-of-central-directory record in the last " + std::to_string(len) + " bytes",
       "a zip archive ending with an EOCD record (PK\\5\\6)");
    return false;
  }
  std::uint64_t picked = pick_eocd(tail, sigs);
  if (!read_eocd(file, tail, size - len, picked, end, out)) return false;
  check_tail(tail, size - len, sigs, picked, end, out);
  if (end.cd_offset > end.directory_end || end.cd_size > end.directory_end - end.cd_offset) {
    z1(out, Severity::Error,
       "central directory [" + std::to_string(end.cd_offset) + ", +" + std::to_string(end.cd_size) +
           ") runs past the end record at offset " + std::to_string(end.directory_end),
       "the central directory to end where the end records start");
    return false;
  }
  return true;
}

}  // namespace sb::zip::detail
