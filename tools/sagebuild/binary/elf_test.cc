// The ELF reader against a library the host C compiler builds with known
// properties, against handcrafted headers, and against mutated copies.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "sagebuild/binary/elf.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"

using namespace sb::binary;
namespace fs = std::filesystem;

namespace {

const char* kSource = R"(
#include <math.h>
double sb_exported(double x) { return sqrt(x) + 1; }
__attribute__((visibility("hidden"))) int sb_hidden(void) { return 3; }
__attribute__((weak)) int sb_weak_def(void) { return 4; }
extern int sb_weak_ref(void) __attribute__((weak));
int sb_call(void) { return sb_weak_ref ? sb_weak_ref() : 0; }
)";

// Builds the sample library once per run; empty when no C compiler works.
const std::string& sample_library() {
  static const std::string bytes = [] {
    fs::path dir = fs::temp_directory_path() / ("sb-elf-test-" + std::to_string(sb::process_id()));
    fs::create_directories(dir);
    sb::write_file_atomic(dir / "t.c", kSource);
    std::string cmd = "cc -shared -fPIC -O1 " + (dir / "t.c").string() + " -o " + (dir / "libt.so").string() +
                      " -Wl,-soname,libsbtest.so.1 '-Wl,-rpath,$ORIGIN/../lib:/opt/x'"
                      " -Wl,--enable-new-dtags -Wl,-z,x86-64-v3 -lm 2>/dev/null";
    std::string out;
    if (std::system(cmd.c_str()) == 0) out = sb::read_file(dir / "libt.so");
    fs::remove_all(dir);
    return out;
  }();
  return bytes;
}

#define REQUIRE_SAMPLE()                                                 \
  if (sample_library().empty()) {                                        \
    WARN("skipped: no working 'cc' to build the sample x86_64 library"); \
    return;                                                              \
  }

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string header(std::uint8_t cls, std::uint8_t data, std::uint16_t machine) {
  std::string h(64, '\0');
  h[0] = 0x7f;
  h[1] = 'E';
  h[2] = 'L';
  h[3] = 'F';
  h[4] = static_cast<char>(cls);
  h[5] = static_cast<char>(data);
  h[6] = 1;
  bool le = data == 1;
  h[16] = le ? 3 : 0;
  h[17] = le ? 0 : 3;  // ET_DYN
  h[18] = static_cast<char>(le ? machine & 0xff : machine >> 8);
  h[19] = static_cast<char>(le ? machine >> 8 : machine & 0xff);
  return h;
}

}  // namespace

TEST_CASE("a real shared library: machine, dynamic section, versions, ISA level") {
  REQUIRE_SAMPLE();
  MemorySource src(sample_library());
  sb::Findings findings;
  auto elf = ElfFile::parse(src, findings);
  REQUIRE(elf);
  CHECK(findings.empty());
  const ElfInfo& info = elf->info();
#if defined(__x86_64__)
  CHECK(info.ident.machine == "x86_64");
  CHECK(info.x86_isa_level == 3);
#endif
  CHECK(info.ident.type == 3);
  CHECK(info.soname == "libsbtest.so.1");
  CHECK(info.needed == std::vector<std::string>{"libm.so.6"});
  CHECK(info.runpath == std::vector<std::string>{"$ORIGIN/../lib", "/opt/x"});
  CHECK(info.rpath.empty());

  auto exports = elf->exported_symbols();
  CHECK(contains(exports, "sb_exported"));
  CHECK(contains(exports, "sb_weak_def"));
  CHECK_FALSE(contains(exports, "sb_hidden"));

  const ElfSymbol* sqrt_sym = nullptr;
  const ElfSymbol* weak_ref = nullptr;
  for (const ElfSymbol* s : elf->undefined_symbols()) {
    if (s->name == "sqrt") sqrt_sym = s;
    if (s->name == "sb_weak_ref") weak_ref = s;
  }
  REQUIRE(sqrt_sym);
  CHECK(sqrt_sym->binding == SymbolBinding::Global);
  CHECK(sqrt_sym->version_file == "libm.so.6");
  CHECK(sqrt_sym->version.rfind("GLIBC_2.", 0) == 0);
  REQUIRE(weak_ref);
  CHECK(weak_ref->binding == SymbolBinding::Weak);
  CHECK(weak_ref->version.empty());

  bool libm_need = false;
  for (const auto& n : info.version_needs)
    if (n.file == "libm.so.6") libm_need = contains(n.versions, sqrt_sym->version);
  CHECK(libm_need);

  const ElfSection* text = elf->section(".text");
  REQUIRE(text);
  CHECK(text->size > 0);
  CHECK(elf->section(".nv_fatbin") == nullptr);
  sb::Findings f2;
  auto statics = elf->static_symbols(f2);
  CHECK(std::any_of(statics.begin(), statics.end(),
                    [](const ElfSymbol& s) { return s.name == "sb_hidden" && s.type == 2; }));
}

TEST_CASE("other ELF flavours and non-ELF input are identified, not parsed") {
  struct Case {
    std::string bytes, expect;
  };
  for (const Case& c : std::vector<Case>{
           {header(1, 1, 3), "ELF32 little-endian i686"},
           {header(2, 2, 21), "ELF64 big-endian ppc64"},
           {header(2, 1, 183).substr(0, 40), "ELF64 little-endian aarch64, truncated header"},
           {"MZ\x90\x00", "not an ELF file"},
       }) {
    MemorySource src(c.bytes);
    sb::Findings f;
    CHECK_FALSE(ElfFile::parse(src, f));
    REQUIRE(f.size() == 1);
    CHECK(f[0].rule == "P8");
    CHECK(f[0].message.rfind(c.expect, 0) == 0);
  }
  MemorySource aarch64(header(2, 1, 183));
  CHECK(identify_elf(aarch64).machine == "aarch64");
  sb::Findings f;
  auto bare = ElfFile::parse(aarch64, f);  // no sections at all: empty, not an error
  REQUIRE(bare);
  CHECK(bare->info().sections.empty());
  CHECK(f.empty());
}

TEST_CASE("hostile section headers are findings, not crashes or huge allocations") {
  std::string h = header(2, 1, 62) + std::string(64, '\0');
  h[40] = 64;              // e_shoff = 64: right after the header ...
  h[58] = 64;              // e_shentsize
  h[60] = h[61] = '\xff';  // ... and 65535 of them in a 128-byte file
  MemorySource src(h);
  sb::Findings f;
  auto elf = ElfFile::parse(src, f);
  REQUIRE(elf);
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].message.find("do not fit the file") != std::string::npos);
}

TEST_CASE("truncated and mutated libraries never crash the reader") {
  REQUIRE_SAMPLE();
  const std::string& lib = sample_library();
  for (std::size_t cut = 0; cut < lib.size(); cut += std::max<std::size_t>(1, lib.size() / 97)) {
    MemorySource src(lib.substr(0, cut));
    sb::Findings f;
    auto elf = ElfFile::parse(src, f);
    if (elf) (void)elf->exported_symbols();
  }
  std::mt19937 rng(42);
  int parsed = 0;
  for (int round = 0; round < 300; ++round) {
    std::string m = lib;
    for (int k = 0; k < 8; ++k) m[rng() % std::min<std::size_t>(m.size(), 4096)] = static_cast<char>(rng());
    m[rng() % m.size()] = static_cast<char>(rng());
    MemorySource src(m);
    sb::Findings f;
    auto elf = ElfFile::parse(src, f);
    if (elf) {
      ++parsed;
      (void)elf->undefined_symbols();
      (void)elf->static_symbols(f);
    }
  }
  CHECK(parsed > 0);
}
