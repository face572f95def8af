// The PE reader against minimal images built here byte by byte (PE32 and
// PE32+, regular and delay-load imports), truncations and mutations.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "sagebuild/binary/pe.h"

using namespace sb::binary;

namespace {

void put(std::string& img, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) img[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_str(std::string& img, std::size_t at, const std::string& s) { img.replace(at, s.size(), s); }

// A DLL with .rdata (imports of KERNEL32.dll and cudart64_13.dll, a
// delay-load import of nvcuda.dll) and .nv_fatb (a fatbin magic).
std::string image(std::uint16_t machine, bool plus) {
  std::string img(0x600, '\0');
  put_str(img, 0, "MZ");
  put(img, 0x3c, 0x40, 4);
  put_str(img, 0x40, std::string("PE\0\0", 4));
  std::size_t coff = 0x44, opt = coff + 20;
  std::uint16_t opt_size = plus ? 240 : 224;
  put(img, coff, machine, 2);
  put(img, coff + 2, 2, 2);  // sections
  put(img, coff + 16, opt_size, 2);
  put(img, coff + 18, 0x2022, 2);  // DLL | EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE
  put(img, opt, plus ? 0x20b : 0x10b, 2);
  std::size_t count = opt + (plus ? 108 : 92), dirs = count + 4;
  put(img, count, 16, 4);
  put(img, dirs + 1 * 8, 0x1000, 4);  // import directory
  put(img, dirs + 1 * 8 + 4, 60, 4);
  put(img, dirs + 13 * 8, 0x1100, 4);  // delay-load import directory
  put(img, dirs + 13 * 8 + 4, 64, 4);
  std::size_t sec = opt + opt_size;
  put_str(img, sec, ".rdata");
  put(img, sec + 8, 0x200, 4);
  put(img, sec + 12, 0x1000, 4);
  put(img, sec + 16, 0x200, 4);
  put(img, sec + 20, 0x200, 4);
  put_str(img, sec + 40, ".nv_fatb");
  put(img, sec + 48, 0x20, 4);
  put(img, sec + 52, 0x2000, 4);
  put(img, sec + 56, 0x200, 4);
  put(img, sec + 60, 0x400, 4);
  put(img, 0x200 + 12, 0x1080, 4);  // descriptor 0 name RVA
  put(img, 0x200 + 20 + 12, 0x1090, 4);
  put_str(img, 0x280, "KERNEL32.dll");
  put_str(img, 0x290, "cudart64_13.dll");
  put(img, 0x300 + 4, 0x10a0, 4);  // delay descriptor 0 name RVA
  put_str(img, 0x2a0, "nvcuda.dll");
  put(img, 0x400, 0xBA55ED50, 4);
  return img;
}

}  // namespace

TEST_CASE("machine, imports, delay-load imports and sections of PE32+ and PE32 images") {
  struct Case {
    std::uint16_t machine;
    bool plus;
    std::string name, platform;
  };
  for (const Case& c : std::vector<Case>{{0x8664, true, "AMD64", "win_amd64"},
                                         {0xAA64, true, "ARM64", "win_arm64"},
                                         {0x014C, false, "I386", "win32"},
                                         {0x01C4, true, "0x01c4", ""}}) {
    INFO(c.name);
    MemorySource src(image(c.machine, c.plus));
    sb::Findings f;
    auto pe = PeFile::parse(src, f);
    REQUIRE(pe);
    CHECK(f.empty());
    CHECK(pe->info().machine == c.name);
    CHECK(pe->info().platform == c.platform);
    CHECK(pe->info().pe32_plus == c.plus);
    CHECK(pe->info().is_dll);
    CHECK(pe->info().imports == std::vector<std::string>{"KERNEL32.dll", "cudart64_13.dll"});
    CHECK(pe->info().delay_imports == std::vector<std::string>{"nvcuda.dll"});
    const PeSection* fat = pe->section(".nv_fatb");
    REQUIRE(fat);
    CHECK(fat->raw_offset == 0x400);
    CHECK(fat->raw_size == 0x200);
    CHECK(fat->virtual_size == 0x20);
    CHECK(pe->section(".text") == nullptr);
    std::uint64_t off = 0;
    CHECK(pe->rva_to_offset(0x1090, off));
    CHECK(off == 0x290);
    CHECK_FALSE(pe->rva_to_offset(0x5000, off));
  }
}

TEST_CASE("non-PE input and broken import tables are P8 findings") {
  sb::Findings f;
  MemorySource elf(std::string("\x7f"
                               "ELF",
                               4) +
                   std::string(60, '\0'));
  CHECK_FALSE(PeFile::parse(elf, f));
  REQUIRE(f.size() == 1);
  CHECK(f[0].message == "not a PE image (no MZ header)");

  std::string no_pe = image(0x8664, true);
  put(no_pe, 0x3c, 0x10000, 4);  // e_lfanew past the end
  MemorySource s2(no_pe);
  f.clear();
  CHECK_FALSE(PeFile::parse(s2, f));
  CHECK(f.at(0).message.find("without a PE signature") != std::string::npos);

  std::string endless = image(0x8664, true);
  for (std::size_t at = 0x200; at < 0x400; at += 20) put(endless, at + 12, 0x1080, 4);
  MemorySource s3(endless);
  f.clear();
  auto pe = PeFile::parse(s3, f);
  REQUIRE(pe);
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].message.find("no terminating entry") != std::string::npos);

  std::string many = image(0x8664, true);
  put(many, 0x44 + 2, 60000, 2);  // 60000 sections
  MemorySource s4(many);
  f.clear();
  REQUIRE(PeFile::parse(s4, f));
  CHECK(f.at(0).message.find("do not fit") != std::string::npos);
}

TEST_CASE("truncated and mutated images never crash the reader") {
  const std::string img = image(0x8664, true);
  for (std::size_t cut = 0; cut <= img.size(); cut += 7) {
    MemorySource src(img.substr(0, cut));
    sb::Findings f;
    (void)PeFile::parse(src, f);
  }
  std::mt19937 rng(3);
  for (int round = 0; round < 500; ++round) {
    std::string m = img;
    for (int k = 0; k < 6; ++k) m[rng() % 0x420] = static_cast<char>(rng());
    MemorySource src(m);
    sb::Findings f;
    (void)PeFile::parse(src, f);
  }
  SUCCEED();
}
