// The ELF reader (sections, dynamic section, symbols and their versions,
// notes), the static symbols cubins keep, and a .nv_fatbin inside.
#include "sagebuild/binary/elf.h"
#include "sagebuild/binary/fatbin.h"
#include "sagebuild/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  binary::MemorySource src{std::string(fuzz::bytes(data, size))};
  Findings out;
  auto elf = binary::ElfFile::parse(src, out);
  if (elf) {
    elf->undefined_symbols();
    elf->exported_symbols();
    elf->static_symbols(out);
    binary::cuda_coverage(*elf, out);
  }
  fuzz::check_bounded(out);
  return 0;
}
