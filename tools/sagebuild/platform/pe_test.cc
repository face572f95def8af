#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>

#include "sagebuild/platform/pe.h"

using namespace sb::platform;

namespace {

// Builds a minimal PE image byte by byte:
//   0x000 DOS header ("MZ", e_lfanew at 0x3c = 0x40)
//   0x040 "PE\0\0", COFF header, optional header (PE32+ or PE32, 16 directories)
//   then the section table: .rdata (file 0x200, RVA 0x1000) and .nv_fatb
//   (file 0x300, RVA 0x2000)
//   0x200 import descriptors for two DLLs + the null one; names at 0x240/0x250.
struct PeBuilder {
  std::uint16_t machine = 0x8664;
  bool pe32_plus = true;
  std::string dll1 = "c10.dll";
  std::string dll2 = "cudart64_12.dll";

  static constexpr std::size_t kImportsEnd = 0x260;  // the last byte the reader needs

  std::string bytes;

  void put16(std::size_t at, std::uint16_t v) {
    bytes[at] = char(v & 0xff);
    bytes[at + 1] = char(v >> 8);
  }
  void put32(std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[at + i] = char((v >> (8 * i)) & 0xff);
  }
  void put(std::size_t at, std::string_view s) { bytes.replace(at, s.size(), s); }

  std::string build() {
    bytes.assign(0x310, '\0');
    put(0, "MZ");
    put32(0x3c, 0x40);
    put(0x40, std::string_view("PE\0\0", 4));
    const std::size_t coff = 0x44, opt = coff + 20;
    const std::uint16_t opt_size = pe32_plus ? 240 : 224;
    put16(coff, machine);
    put16(coff + 2, 2);            // sections
    put16(coff + 16, opt_size);
    put16(coff + 18, 0x2022);      // DLL | EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE
    put16(opt, pe32_plus ? 0x20b : 0x10b);
    const std::size_t dirs = opt + (pe32_plus ? 112 : 96);
    put32(dirs - 4, 16);           // NumberOfRvaAndSizes
    put32(dirs + 8, 0x1000);       // import directory RVA
    put32(dirs + 12, 60);          // and size
    std::size_t sec = opt + opt_size;
    section(sec, ".rdata", 0x1000, 0x100, 0x200);
    section(sec + 40, ".nv_fatb", 0x2000, 0x10, 0x300);
    import(0x200, 0x1040);
    import(0x214, 0x1050);         // 0x228..0x23b stays zero: the terminator
    put(0x240, dll1);
    put(0x250, dll2);
    put(0x300, "\x50\xed\x55\xba");  // a fat binary's magic, as nvcc writes it
    return bytes;
  }

  void section(std::size_t at, std::string_view name, std::uint32_t va, std::uint32_t size,
               std::uint32_t raw) {
    put(at, name);
    put32(at + 8, size);
    put32(at + 12, va);
    put32(at + 16, size);
    put32(at + 20, raw);
  }
  void import(std::size_t at, std::uint32_t name_rva) {
    put32(at + 12, name_rva);
    put32(at + 16, 0x1080);  // FirstThunk: not read, but non-zero as in real files
  }
};

}  // namespace

TEST_CASE("parse_pe reads machine, sections and imported DLLs") {
  PeParse r = parse_pe(PeBuilder{}.build());
  INFO(r.error);
  REQUIRE(r.image);
  const PeImage& img = *r.image;
  CHECK(img.machine == 0x8664);
  CHECK(platform_tag_for_machine(img.machine) == std::string("win_amd64"));
  CHECK(img.pe32_plus);
  CHECK(img.is_dll);
  CHECK(img.imported_dlls == std::vector<std::string>{"c10.dll", "cudart64_12.dll"});
  CHECK(img.imports("CUDART64_12.DLL"));
  CHECK_FALSE(img.imports("python3.dll"));
  REQUIRE(img.sections.size() == 2);
  const PeSection* fatbin = img.find_section(".nv_fatb");
  REQUIRE(fatbin);
  CHECK(fatbin->raw_offset == 0x300);
  CHECK(fatbin->virtual_address == 0x2000);
  CHECK_FALSE(img.find_section(".nv_fatbin"));
}

TEST_CASE("machine types map to platform tags") {
  CHECK(platform_tag_for_machine(0xaa64) == std::string("win_arm64"));
  CHECK(platform_tag_for_machine(0x014c) == std::string("win32"));
  CHECK_FALSE(platform_tag_for_machine(0x01c4));  // ARMNT: no wheel tag of ours

  PeBuilder arm;
  arm.machine = 0xaa64;
  CHECK(parse_pe(arm.build()).image->machine == 0xaa64);
  PeBuilder x86;
  x86.machine = 0x014c;
  x86.pe32_plus = false;  // PE32: the data directories sit 16 bytes earlier
  PeParse r = parse_pe(x86.build());
  REQUIRE(r.image);
  CHECK_FALSE(r.image->pe32_plus);
  CHECK(r.image->imported_dlls.size() == 2);
}

TEST_CASE("every truncation is reported, none crashes") {
  const std::string full = PeBuilder{}.build();
  for (std::size_t n = 0; n < full.size(); ++n) {
    PeParse r = parse_pe(std::string_view(full).substr(0, n));
    if (n < PeBuilder::kImportsEnd) {
      INFO("prefix of " << n << " bytes");
      CHECK_FALSE(r.image);
      CHECK_FALSE(r.error.empty());
    } else {
      // The fat binary's bytes are not needed to read the headers.
      CHECK(r.image);
    }
  }
}

TEST_CASE("garbage and hostile headers give errors that say what was expected") {
  CHECK(parse_pe("").error.find("'MZ'") != std::string::npos);
  CHECK(parse_pe("\x7f" "ELF\x02\x01\x01").error.find("not a PE file") != std::string::npos);

  PeBuilder b;
  std::string img = b.build();
  b.put32(0x3c, 0xfffffff0);  // e_lfanew far past the end
  CHECK(parse_pe(b.bytes).error.find("'PE\\0\\0'") != std::string::npos);

  b.build();
  b.put16(0x44 + 2, 0xffff);  // 65535 sections
  CHECK(parse_pe(b.bytes).error.find("at most 96 expected") != std::string::npos);

  b.build();
  b.put16(0x58, 0x1234);  // optional header magic
  CHECK(parse_pe(b.bytes).error.find("expected 0x10b or 0x20b") != std::string::npos);

  b.build();
  b.put(0x250, std::string(16, 'x'));  // the second name loses its NUL...
  b.bytes.resize(0x260);               // ...and the file ends there
  CHECK(parse_pe(b.bytes).error.find("not NUL-terminated") != std::string::npos);

  b.build();
  b.put32(0x200 + 12, 0x7fff0000);  // a name RVA no section maps
  CHECK(parse_pe(b.bytes).error.find("descriptor 0") != std::string::npos);
}

TEST_CASE("an import table without its terminator stops at the cap") {
  PeBuilder b;
  b.build();
  // Fill .rdata with descriptors that all name c10.dll: no null entry before
  // the file ends.
  for (std::size_t at = 0x200; at + 20 <= 0x300; at += 20) b.import(at, 0x1040);
  b.put(0x240, "c10.dll");  // keep the name readable where descriptors overlap it
  PeParse r = parse_pe(b.bytes);
  CHECK_FALSE(r.image);
  CHECK_FALSE(r.error.empty());
  PeLimits tight;
  tight.max_imports = 2;
  CHECK(parse_pe(PeBuilder{}.build(), tight).error.find("more than 2 import descriptors") !=
        std::string::npos);
}

TEST_CASE("random byte flips never crash the reader") {
  const std::string base = PeBuilder{}.build();
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> where(0, base.size() - 1);
  std::uniform_int_distribution<int> value(0, 255), flips(1, 8);
  std::size_t parsed = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string mutated = base;
    for (int k = flips(rng); k > 0; --k) mutated[where(rng)] = char(value(rng));
    PeParse r = parse_pe(mutated);
    CHECK(r.image.has_value() == r.error.empty());
    if (r.image) {
      ++parsed;
      CHECK(r.image->sections.size() <= 96);
    }
  }
  CHECK(parsed > 0);  // many flips land in padding: the reader is not merely rejecting all
}
