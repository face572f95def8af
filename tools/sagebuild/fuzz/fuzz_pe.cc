// The PE/COFF reader (sections, long names, imports, delay-load imports)
// and the `.nv_fatb` section Windows builds carry.
#include "sagebuild/binary/fatbin.h"
#include "sagebuild/binary/pe.h"
#include "sagebuild/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  binary::MemorySource src{std::string(fuzz::bytes(data, size))};
  Findings out;
  if (auto pe = binary::PeFile::parse(src, out)) {
    std::uint64_t off = 0;
    pe->rva_to_offset(0x1000, off);
    if (const auto* fat = pe->section(".nv_fatb")) binary::cuda_coverage_of(src, fat->raw_offset, fat->raw_size, out);
  }
  fuzz::check_bounded(out);
  return 0;
}
