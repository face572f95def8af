// Fatbin parsing against libraries the local nvcc builds (skipped without
// nvcc), against cuobjdump's listing when cuobjdump is present, and against
// handcrafted and mutated sections.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <vector>

#include "sagebuild/binary/elf.h"
#include "sagebuild/binary/fatbin.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"

using namespace sb::binary;
namespace fs = std::filesystem;

namespace {

const char* kKernels = R"(
extern "C" __global__ void kern_add(float* a, float b) { a[threadIdx.x] += b; }
__global__ void kern_mul(float* a, float b) { a[threadIdx.x] *= b; }
template <int N> __global__ void kern_tpl(int* a) { a[threadIdx.x] = N; }
template __global__ void kern_tpl<3>(int*);
__device__ __noinline__ float helper(float x) { return x * x; }
__global__ void kern_helper(float* a) { a[0] = helper(a[1]); }
)";
const std::vector<std::string> kNames = {"kern_add", "_Z8kern_mulPff", "_Z8kern_tplILi3EEvPi", "_Z11kern_helperPf"};

// $CUDA_HOME's (scripts/test.sh points it at the machine's CUDA 13.0 or the
// one sagebuild provisioned from PyPI), else /usr/local/cuda's, else PATH's.
std::string tool(const char* name) {
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/bin/");
  dirs.push_back("/usr/local/cuda/bin/");
  dirs.push_back("");
  for (const std::string& dir : dirs) {
    std::string cmd = "\"" + dir + name + "\" --version >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return dir + name;
  }
  return {};
}

std::string run(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

struct Built {
  fs::path dir, lib;
  ~Built() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

// Compiles kKernels into a shared library with these nvcc flags.
bool build(const std::string& nvcc, const std::string& flags, Built& b) {
  static int n = 0;
  b.dir = fs::temp_directory_path() / ("sb-fatbin-" + std::to_string(sb::process_id()) + "-" + std::to_string(n++));
  fs::create_directories(b.dir);
  sb::write_file_atomic(b.dir / "k.cu", kKernels);
  b.lib = b.dir / "libk.so";
  std::string cmd = nvcc + " -shared -Xcompiler -fPIC " + flags + " " + (b.dir / "k.cu").string() + " -o " +
                    b.lib.string() + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

struct Parsed {
  std::unique_ptr<FileSource> src;
  std::unique_ptr<ElfFile> elf;
  CudaCoverage cov;
  sb::Findings findings;
};

Parsed parse(const fs::path& lib) {
  Parsed p;
  p.src = FileSource::open(lib);
  p.elf = ElfFile::parse(*p.src, p.findings);
  if (p.elf) p.cov = cuda_coverage(*p.elf, p.findings);
  return p;
}

std::multiset<std::string> arch_names(const CudaCoverage& c, FatbinKind kind) {
  std::multiset<std::string> out;
  for (const auto& e : c.entries)
    if (e.kind == kind) out.insert(e.arch_name());
  return out;
}

std::set<std::string> distinct(const std::multiset<std::string>& m) { return {m.begin(), m.end()}; }

// Reported to CTest as a skip (SKIP_REGULAR_EXPRESSION), not as a pass.
#define REQUIRE_NVCC(var)                                                                 \
  std::string var = tool("nvcc");                                                         \
  if (var.empty()) {                                                                      \
    std::cout << "SKIPPED: nvcc not found ($CUDA_HOME/bin, /usr/local/cuda/bin, PATH)\n"; \
    return;                                                                               \
  }

}  // namespace

TEST_CASE("nvcc 13 libraries: archs, variants, kernels and compression of every entry") {
  REQUIRE_NVCC(nvcc);
  struct Case {
    std::string flags;
    std::set<std::string> sass, ptx;
    FatbinCompression ptx_compression, sass_compression;
  };
  const std::string three =
      "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a "
      "-gencode arch=compute_120,code=compute_120";
  for (const Case& c : std::vector<Case>{
           {three, {"sm_80", "sm_90a"}, {"compute_120"}, FatbinCompression::Zstd, FatbinCompression::None},
           {three + " --compress-mode=speed",
            {"sm_80", "sm_90a"},
            {"compute_120"},
            FatbinCompression::Lz4,
            FatbinCompression::None},
           {"-gencode arch=compute_100a,code=sm_100a -gencode arch=compute_120f,code=sm_120f "
            "-gencode arch=compute_90,code=compute_90 --compress-mode=none",
            {"sm_100a", "sm_120f"},
            {"compute_90"},
            FatbinCompression::None,
            FatbinCompression::None},
           {"-gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=compute_89 "
            "-Xfatbin -compress-all",
            {"sm_86"},
            {"compute_89"},
            FatbinCompression::Zstd,
            FatbinCompression::Zstd},
       }) {
    INFO("nvcc " << c.flags);
    Built b;
    REQUIRE(build(nvcc, c.flags, b));
    Parsed p = parse(b.lib);
    REQUIRE(p.elf);
    CHECK(p.findings.empty());
    CHECK(distinct(arch_names(p.cov, FatbinKind::Sass)) == c.sass);
    CHECK(distinct(arch_names(p.cov, FatbinKind::Ptx)) == c.ptx);
    for (const auto& e : p.cov.entries)
      CHECK(e.compression == (e.kind == FatbinKind::Ptx ? c.ptx_compression : c.sass_compression));
    for (const std::string& k : kNames) {
      INFO(k);
      REQUIRE(p.cov.kernels.count(k));
      std::set<std::string> sass, ptx;
      for (auto a : p.cov.kernels.at(k).sass) sass.insert("sm_" + a.str());
      for (auto a : p.cov.kernels.at(k).ptx) ptx.insert("compute_" + a.str());
      CHECK(sass == c.sass);
      CHECK(ptx == c.ptx);
    }
    CHECK_FALSE(p.cov.kernels.count("_Z6helperf"));  // a device function, not a kernel
  }
}

TEST_CASE("runs_on follows CUDA's SASS and PTX compatibility rules") {
  CudaCoverage c;
  c.kernels["k"].sass = {{80, 0}, {90, 'a'}, {120, 'f'}};
  c.kernels["k"].ptx = {{100, 'a'}};
  CHECK(c.runs_on("k", {80, 0}));
  CHECK(c.runs_on("k", {86, 0}));         // same major, later minor
  CHECK(c.runs_on("k", {90, 0}));         // sm_90a on exactly 9.0
  CHECK(c.runs_on("k", {100, 0}));        // compute_100a JITs on exactly 10.0 ...
  CHECK_FALSE(c.runs_on("k", {103, 0}));  // ... and nowhere else
  c.kernels["k"].ptx = {{100, 'a'}, {89, 0}};
  CHECK(c.runs_on("k", {103, 0}));  // compute_89 JITs forward
  CHECK(c.runs_on("k", {121, 0}));  // sm_120f runs on its family
  CHECK_FALSE(c.runs_on("other", {80, 0}));
  CudaCoverage s;
  s.kernels["k"].sass = {{80, 0}};
  CHECK_FALSE(s.runs_on("k", {90, 0}));  // SASS never crosses majors
  CHECK_FALSE(s.runs_on("k", {75, 0}));
}

TEST_CASE("our listing matches cuobjdump's") {
  REQUIRE_NVCC(nvcc);
  std::string cuobjdump = tool("cuobjdump");
  if (cuobjdump.empty()) {
    WARN("skipped: cuobjdump not found");
    return;
  }
  Built b;
  REQUIRE(build(nvcc,
                "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a "
                "-gencode arch=compute_120,code=compute_120 -gencode arch=compute_100f,code=sm_100f",
                b));
  Parsed p = parse(b.lib);
  // cuobjdump names listed files "<lib>.<n>.sm_<arch>.cubin|ptx": PTX
  // under sm_ too, and (13.0) without the 'f' of family variants.  The
  // "arch = " lines of -symbols keep the full SASS spelling.
  auto spelled = [](const CudaCoverage& c, FatbinKind kind) {
    std::multiset<std::string> out;
    for (const auto& e : c.entries)
      if (e.kind == kind) out.insert("sm_" + std::to_string(e.arch.number) + (e.arch.variant == 'a' ? "a" : ""));
    return out;
  };
  auto matches = [&](const std::string& args, const std::string& re) {
    std::multiset<std::string> out;
    std::string text = run(cuobjdump + " " + args + " " + b.lib.string());
    std::regex r(re);
    for (std::sregex_iterator it(text.begin(), text.end(), r), end; it != end; ++it) out.insert((*it)[1]);
    return out;
  };
  auto elf_list = matches("--list-elf", "\\.(sm_[0-9]+[af]?)\\.cubin");
  auto ptx_list = matches("--list-ptx", "\\.(sm_[0-9]+[af]?)\\.ptx");
  INFO("cuobjdump --list-elf found " << elf_list.size() << ", --list-ptx " << ptx_list.size());
  CHECK(elf_list.size() >= 3);
  CHECK(spelled(p.cov, FatbinKind::Sass) == elf_list);
  CHECK(spelled(p.cov, FatbinKind::Ptx) == ptx_list);
  // One "arch = " line per entry, PTX entries spelled sm_ as well.
  auto arch_lines = matches("-symbols", "arch = (sm_[0-9]+[af]?)");
  auto ours = arch_names(p.cov, FatbinKind::Sass);
  for (const auto& e : p.cov.entries)
    if (e.kind == FatbinKind::Ptx) ours.insert("sm_" + e.arch.str());
  CHECK(ours == arch_lines);

  std::set<std::string> entries;
  std::string syms = run(cuobjdump + " -symbols " + b.lib.string());
  std::regex entry_re("STO_ENTRY\\s+(\\S+)");
  for (std::sregex_iterator it(syms.begin(), syms.end(), entry_re), end; it != end; ++it) entries.insert((*it)[1]);
  std::set<std::string> kernels;
  for (const auto& [k, cov] : p.cov.kernels)
    if (!cov.sass.empty()) kernels.insert(k);
  CHECK(kernels == entries);
}

TEST_CASE("PTX entry names") {
  CHECK(ptx_kernels(".visible .entry kern_add(\n.param .u64 p)\n.entry\t_Z3fooi (\n.func helper(") ==
        std::vector<std::string>{"kern_add", "_Z3fooi"});
  CHECK(ptx_kernels("// .entryless\n").empty());
}

TEST_CASE("hostile fatbin sections are findings, never crashes") {
  auto le = [](std::string& s, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  // A container claiming more entry bytes than the section has.
  std::string big;
  le(big, 0xBA55ED50, 4);
  le(big, 1, 2);
  le(big, 16, 2);
  le(big, 1 << 30, 8);
  MemorySource s1(big);
  sb::Findings f;
  CHECK(parse_fatbin_section(s1, 0, big.size(), f).empty());
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "P12");

  // An entry whose payload runs past its container.
  std::string one;
  le(one, 0xBA55ED50, 4);
  le(one, 1, 2);
  le(one, 16, 2);
  le(one, 64, 8);
  le(one, 2, 2);
  le(one, 0x101, 2);
  le(one, 64, 4);
  le(one, 4096, 8);
  one.resize(16 + 64, '\0');
  MemorySource s2(one);
  f.clear();
  CHECK(parse_fatbin_section(s2, 0, one.size(), f).empty());
  CHECK(f.size() == 1);
  f.clear();
  CHECK(parse_fatbin_section(s2, 8, one.size(), f).empty());  // section past the file
  CHECK(f.size() == 1);

  std::string nvcc = tool("nvcc");
  if (nvcc.empty()) return;
  Built b;
  REQUIRE(build(nvcc, "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90", b));
  std::string lib = sb::read_file(b.lib);
  Parsed p = parse(b.lib);
  const ElfSection* sec = p.elf->section(".nv_fatbin");
  REQUIRE(sec);
  std::mt19937 rng(1);
  for (int round = 0; round < 200; ++round) {
    std::string m = lib;
    for (int k = 0; k < 6; ++k) m[sec->offset + rng() % sec->size] = static_cast<char>(rng());
    MemorySource src(m);
    sb::Findings ff;
    auto elf = ElfFile::parse(src, ff);
    if (elf) (void)cuda_coverage(*elf, ff);
  }
}
