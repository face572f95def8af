#include "sagebuild/binary/fatbin.h"

#include <algorithm>

#include <lz4.h>
#include <zstd.h>

#include "sagebuild/binary/le.h"

namespace sb::binary {

namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::uint64_t kContainerHeader = 16;
constexpr std::uint64_t kMinEntryHeader = 64;
constexpr std::uint64_t kFlagLz4 = 0x2000, kFlagZstd = 0x8000;
constexpr std::uint64_t kFlagArchSpecific = 0x100000, kFlagFamily = 0x200000;
constexpr std::uint8_t kStoEntry = 0x10;

void b2(Findings& out, std::string msg, std::string expected = {}) {
  add(out, "P12", Severity::Error, "", std::move(msg), std::move(expected));
}

FatbinEntry decode_entry(const std::uint8_t* h, std::uint64_t at, std::uint64_t header_size) {
  FatbinEntry e;
  e.raw_kind = le16(h);
  e.kind = e.raw_kind == 2 ? FatbinKind::Sass : e.raw_kind == 1 ? FatbinKind::Ptx : FatbinKind::Other;
  std::uint64_t padded = le64(h + 8);
  std::uint32_t compressed = le32(h + 16);
  e.version_minor = le16(h + 24);
  e.version_major = le16(h + 26);
  e.arch.number = le32(h + 28);
  e.flags = le64(h + 40);
  e.arch.variant = (e.flags & kFlagArchSpecific) ? 'a' : (e.flags & kFlagFamily) ? 'f' : 0;
  e.compression = (e.flags & kFlagZstd)  ? FatbinCompression::Zstd
                  : (e.flags & kFlagLz4) ? FatbinCompression::Lz4
                                         : FatbinCompression::None;
  e.payload_offset = at + header_size;
  e.payload_size = e.compressed() && compressed ? compressed : padded;
  e.uncompressed_size = e.compressed() ? le64(h + 56) : padded;
  return e;
}

// Entries of one container whose entries span [at, end); returns false on
// a header that cannot be trusted.
bool parse_container(ByteSource& src, std::uint64_t at, std::uint64_t end, std::vector<FatbinEntry>& entries,
                     Findings& out, const FatbinLimits& lim) {
  while (at < end) {
    std::uint8_t h[kMinEntryHeader];
    if (end - at < kMinEntryHeader || !src.read(at, h, sizeof h)) {
      b2(out, "fatbin entry header at offset " + std::to_string(at) + " runs past its container",
         "64-byte entry headers inside the container");
      return false;
    }
    std::uint64_t hs = le32(h + 4), padded = le64(h + 8);
    if (hs < kMinEntryHeader || hs > end - at || padded > end - at - hs) {
      b2(out,
         "fatbin entry at offset " + std::to_string(at) + " declares header " + std::to_string(hs) + " and payload " +
             std::to_string(padded) + " bytes, past its container's end at " + std::to_string(end),
         "entries inside their container");
      return false;
    }
    if (entries.size() >= lim.max_entries) {
      b2(out, "more than " + std::to_string(lim.max_entries) + " fatbin entries", "fewer entries");
      return false;
    }
    FatbinEntry e = decode_entry(h, at, hs);
    if (e.payload_size > padded) {
      b2(out, "fatbin entry at offset " + std::to_string(at) + ": compressed size " + std::to_string(e.payload_size) +
                  " exceeds its payload of " + std::to_string(padded) + " bytes");
      return false;
    }
    entries.push_back(e);
    at += hs + padded;
  }
  return true;
}

bool decompress(const std::string& in, const FatbinEntry& e, std::string& out, std::string& error) {
  if (e.compression == FatbinCompression::Zstd) {
    // A zstd frame states its size: it must be the header's before the
    // buffer is allocated.
    unsigned long long framed = ZSTD_getFrameContentSize(in.data(), in.size());
    if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != e.uncompressed_size) {
      error = framed == ZSTD_CONTENTSIZE_ERROR ? std::string("zstd: not a zstd frame")
                                               : "zstd frame holds " + std::to_string(framed) + " bytes, header says " +
                                                     std::to_string(e.uncompressed_size);
      return false;
    }
    out.assign(e.uncompressed_size, '\0');
    std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) {
      error = std::string("zstd: ") + ZSTD_getErrorName(n);
      return false;
    }
    out.resize(n);
  } else {
    out.assign(e.uncompressed_size, '\0');
    int n = LZ4_decompress_safe(in.data(), out.data(), static_cast<int>(in.size()), static_cast<int>(out.size()));
    if (n < 0) {
      error = "corrupt LZ4 block";
      return false;
    }
    out.resize(static_cast<std::size_t>(n));
  }
  if (out.size() != e.uncompressed_size) {
    error =
        "decompressed to " + std::to_string(out.size()) + " bytes, header says " + std::to_string(e.uncompressed_size);
    return false;
  }
  return true;
}

bool runs(const std::set<CudaArch>& have, CudaArch t, bool ptx) {
  for (CudaArch a : have) {
    bool same_major = a.number / 10 == t.number / 10;
    if (a.variant == 'a' && a.number == t.number) return true;
    if (a.variant == 'f' && same_major && a.number <= t.number) return true;
    if (a.variant == 0 && a.number <= t.number && (ptx || same_major)) return true;
  }
  return false;
}

}  // namespace

std::string CudaArch::str() const {
  return std::to_string(number) + (variant ? std::string(1, variant) : std::string());
}

std::string FatbinEntry::arch_name() const { return (kind == FatbinKind::Ptx ? "compute_" : "sm_") + arch.str(); }

std::vector<FatbinEntry> parse_fatbin_section(ByteSource& src, std::uint64_t offset, std::uint64_t size, Findings& out,
                                              FatbinLimits limits) {
  std::vector<FatbinEntry> entries;
  if (!in_bounds(offset, size, src.size())) {
    b2(out, "fatbin section [" + std::to_string(offset) + ", +" + std::to_string(size) + ") lies outside the file");
    return entries;
  }
  std::uint64_t at = offset, end = offset + size;
  while (end - at >= kContainerHeader) {
    std::uint8_t h[kContainerHeader];
    if (!src.read(at, h, sizeof h)) break;
    if (le32(h) != kFatbinMagic) {
      at += 8;  // containers are 8-aligned; the linker pads between them
      continue;
    }
    std::uint64_t hs = le16(h + 6), body = le64(h + 8);
    if (hs < kContainerHeader || hs > end - at || body > end - at - hs) {
      b2(out,
         "fatbin container at offset " + std::to_string(at) + " declares " + std::to_string(body) +
             " bytes, past the section's end",
         "containers inside the section");
      break;
    }
    if (!parse_container(src, at + hs, at + hs + body, entries, out, limits)) break;
    at += hs + body;
  }
  return entries;
}

bool fatbin_payload(ByteSource& src, const FatbinEntry& e, std::uint64_t max_bytes, std::string& out,
                    std::string& error, std::uint64_t max_ratio) {
  if (e.uncompressed_size > max_bytes || e.payload_size > max_bytes) {
    error =
        "entry of " + std::to_string(e.uncompressed_size) + " bytes exceeds the limit of " + std::to_string(max_bytes);
    return false;
  }
  if (e.compressed() && e.uncompressed_size / max_ratio > e.payload_size) {
    error = "entry claims " + std::to_string(e.uncompressed_size) + " bytes from " + std::to_string(e.payload_size) +
            " compressed, more than " + std::to_string(max_ratio) + " times as many";
    return false;
  }
  std::string raw(e.payload_size, '\0');
  if (!src.read(e.payload_offset, raw.data(), raw.size())) {
    error = "payload lies outside the file";
    return false;
  }
  if (!e.compressed()) {
    out = std::move(raw);
    return true;
  }
  return decompress(raw, e, out, error);
}

std::vector<std::string> cubin_kernels(const std::string& cubin, Findings& out) {
  std::vector<std::string> names;
  MemorySource src(cubin);
  auto elf = ElfFile::parse(src, out);
  if (!elf) return names;
  const auto& secs = elf->info().sections;
  for (const ElfSymbol& s : elf->static_symbols(out)) {
    bool in_text = s.section < secs.size() && secs[s.section].name.rfind(".text.", 0) == 0;
    if (s.type == 2 && (s.other & kStoEntry) && in_text) names.push_back(s.name);
  }
  return names;
}

std::vector<std::string> ptx_kernels(const std::string& ptx, std::uint64_t max_bytes, bool* cut) {
  std::vector<std::string> names;
  std::uint64_t bytes = 0;
  for (std::size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 6)) {
    std::size_t b = ptx.find_first_not_of(" \t", at + 6);
    if (b == std::string::npos || b == at + 6) continue;  // ".entry" must be a whole word
    std::size_t e = std::min(ptx.find_first_of(" \t\r\n(", b), ptx.size());
    if ((bytes += (e - b) + sizeof(std::string)) > max_bytes) {
      if (cut) *cut = true;
      break;
    }
    names.push_back(ptx.substr(b, e - b));
  }
  return names;
}

bool CudaCoverage::runs_on(const std::string& kernel, CudaArch target) const {
  auto it = kernels.find(kernel);
  return it != kernels.end() && (runs(it->second.sass, target, false) || runs(it->second.ptx, target, true));
}

CudaCoverage cuda_coverage_of(ByteSource& src, std::uint64_t offset, std::uint64_t size, Findings& out,
                              FatbinLimits limits) {
  CudaCoverage cov;
  cov.entries = parse_fatbin_section(src, offset, size, out, limits);
  std::uint64_t total = 0, names = 0;
  for (const FatbinEntry& e : cov.entries) {
    if (e.kind == FatbinKind::Other) continue;
    if (e.uncompressed_size > limits.max_total - std::min(total, limits.max_total)) {
      b2(out,
         "fatbin entries decompress to more than " + std::to_string(limits.max_total) + " bytes; " + e.arch_name() +
             " at offset " + std::to_string(e.payload_offset) + " and the rest are not read",
         "a fatbin of ordinary size");
      break;
    }
    std::string payload, error;
    if (!fatbin_payload(src, e, limits.max_payload, payload, error, limits.max_ratio)) {
      b2(out, e.arch_name() + " entry at offset " + std::to_string(e.payload_offset) + ": " + error,
         "a readable fatbin entry");
      continue;
    }
    total += payload.size();
    bool sass = e.kind == FatbinKind::Sass;
    bool cut = false;
    std::vector<std::string> found =
        sass ? cubin_kernels(payload, out) : ptx_kernels(payload, limits.max_kernel_names, &cut);
    if (cut)
      b2(out,
         e.arch_name() + " entry at offset " + std::to_string(e.payload_offset) + ": more than " +
             std::to_string(limits.max_kernel_names) + " bytes of PTX kernel names; the rest are not listed",
         "a fatbin of ordinary size");
    for (const std::string& k : found) {
      auto it = cov.kernels.find(k);
      if (it == cov.kernels.end()) {
        if ((names += k.size()) > limits.max_kernel_names) {
          b2(out,
             "more than " + std::to_string(limits.max_kernel_names) + " bytes of kernel names; the rest are not listed",
             "a fatbin of ordinary size");
          return cov;
        }
        it = cov.kernels.emplace(k, KernelCoverage{}).first;
      }
      (sass ? it->second.sass : it->second.ptx).insert(e.arch);
    }
  }
  return cov;
}

CudaCoverage cuda_coverage(ElfFile& elf, Findings& out, FatbinLimits limits) {
  const ElfSection* s = elf.section(".nv_fatbin");
  if (!s) return {};
  return cuda_coverage_of(elf.source(), s->offset, s->size, out, limits);
}

}  // namespace sb::binary
