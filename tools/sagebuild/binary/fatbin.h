// CUDA fatbinaries: the `.nv_fatbin` section of a library built by nvcc
// (one or more fatbins back to back, one per compilation unit or device
// link), each holding SASS (cubin ELF) and PTX entries per architecture,
// possibly compressed.  NVIDIA publishes no spec; the layout below was
// derived by experiment with nvcc 13.0 and checked against cuobjdump (see
// fatbin_test.cc).  Unknown fields and flags are ignored; every size is
// bounds-checked against the section.
//
// Container header (16 bytes): u32 magic 0xBA55ED50, u16 version (1),
// u16 header size, u64 size of the entries that follow.
// Entry header (header size varies: 64, 80, 96, 112 seen): u16 kind
// (1 PTX, 2 cubin), u16 version (0x0101), u32 header size, u64 payload
// size (padded to 8), u32 compressed size (0 = not compressed), u32 ?,
// u16 minor, u16 major (PTX ISA or cubin format version), u32 arch
// (major*10+minor: 80, 90, 120), u32 ?, u32 ?, u64 flags, u64 ?,
// u64 uncompressed size (when compressed), then optional fields.
// Flags: 0x2000 LZ4 block, 0x8000 zstd frame (nvcc 13's default),
// 0x100000 arch-specific ("sm_90a"), 0x200000 family-specific ("sm_120f").
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/binary/elf.h"
#include "sagebuild/common/finding.h"

namespace sb::binary {

// A GPU architecture as nvcc names it: number 90 and variant 'a' -> "90a".
struct CudaArch {
  unsigned number = 0;
  char variant = 0;         // 0, 'a' (arch-specific) or 'f' (family-specific)
  std::string str() const;  // "90a"
  auto operator<=>(const CudaArch&) const = default;
};

enum class FatbinKind { Sass, Ptx, Other };
enum class FatbinCompression { None, Lz4, Zstd, Unknown };

struct FatbinEntry {
  FatbinKind kind = FatbinKind::Other;
  std::uint16_t raw_kind = 0;
  CudaArch arch;
  FatbinCompression compression = FatbinCompression::None;
  std::uint64_t flags = 0;
  std::uint64_t payload_offset = 0;     // in the ByteSource
  std::uint64_t payload_size = 0;       // bytes stored (compressed size when compressed)
  std::uint64_t uncompressed_size = 0;  // == payload_size when not compressed
  std::uint16_t version_major = 0, version_minor = 0;
  bool compressed() const { return compression != FatbinCompression::None; }
  std::string arch_name() const;  // "sm_90a" for SASS, "compute_120" for PTX
};

// A fatbin's sizes come from the file: each is checked against these before
// anything is allocated.
struct FatbinLimits {
  std::uint64_t max_entries = 100'000;
  std::uint64_t max_payload = 64ull << 20;  // bytes per decompressed entry (ours: 1-5 MB)
  // An entry may claim to inflate at most this many times its stored size
  // (LZ4 cannot exceed 255; real cubins compress 3-20 times), so a header
  // claiming 512 MiB from an empty payload is refused unallocated.
  std::uint64_t max_ratio = 256;
  std::uint64_t max_total = 512ull << 20;        // decompressed bytes over all entries
  std::uint64_t max_kernel_names = 16ull << 20;  // bytes of distinct kernel names kept
};

// Lists the entries of every fatbin in [offset, offset+size).  Structural
// problems are P12 findings; parsing stops at the first unreadable header.
std::vector<FatbinEntry> parse_fatbin_section(ByteSource& src, std::uint64_t offset, std::uint64_t size, Findings& out,
                                              FatbinLimits limits = {});

// An entry's payload, decompressed; false (with `error`) when it is
// corrupt, uses an unknown compression, exceeds `max_bytes` or claims more
// than `max_ratio` times its stored size.
bool fatbin_payload(ByteSource& src, const FatbinEntry& e, std::uint64_t max_bytes, std::string& out,
                    std::string& error, std::uint64_t max_ratio = 256);

// Kernel entry points of a cubin: STT_FUNC symbols marked as entries
// (st_other 0x10) in `.text.<name>` sections.  Mangled names.
std::vector<std::string> cubin_kernels(const std::string& cubin, Findings& out);
// `.entry` names declared in PTX text.
// At most `max_bytes` of names (each counted with the string's own 32-byte
// overhead), so a payload of ".entry" lines cannot grow the list without
// bound before the caller's caps apply; *cut says the list stopped early.
std::vector<std::string> ptx_kernels(const std::string& ptx, std::uint64_t max_bytes = 16ull << 20,
                                     bool* cut = nullptr);

struct KernelCoverage {
  std::set<CudaArch> sass;
  std::set<CudaArch> ptx;
};

struct CudaCoverage {
  std::vector<FatbinEntry> entries;
  std::map<std::string, KernelCoverage> kernels;  // mangled kernel name -> archs
  // Does `kernel` run on a GPU of compute capability `target` ({90, 0})?
  // CUDA's rules: plain sm_XY SASS runs on the same major with minor >= Y;
  // sm_XYf on the same family (same major, minor >= Y); sm_XYa only on XY
  // itself.  PTX compute_XY JIT-compiles for any target >= XY; 'f' PTX
  // for its family, 'a' PTX for XY only.
  bool runs_on(const std::string& kernel, CudaArch target) const;
};

// Reads `.nv_fatbin` of a host library and every entry in it.
CudaCoverage cuda_coverage(ElfFile& elf, Findings& out, FatbinLimits limits = {});

// The same for a fatbin section found by other means (a PE's `.nv_fatb`).
CudaCoverage cuda_coverage_of(ByteSource& src, std::uint64_t offset, std::uint64_t size, Findings& out,
                              FatbinLimits limits = {});

}  // namespace sb::binary
