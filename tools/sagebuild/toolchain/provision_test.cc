// provision_cuda for real: NVIDIA's CUDA 13.0 wheels downloaded from PyPI by
// pip into a temporary cache, for win_amd64 and for linux_x86_64, and the
// home each makes checked file by file against what nvcc and the link look
// for.  The Windows tools run under wine where it is installed; the Linux
// nvcc compiles a kernel.  Needs python3 with pip and PyPI (else the test
// says SKIPPED and why): about 90 MB of wheels per platform, from pip's own
// cache after the first run.  [posix]: python3, wine and nvcc of this host.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/binary/fatbin.h"
#include "sagebuild/binary/pe.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/provision.h"

using namespace sb::toolchain;
namespace fs = std::filesystem;
using sb::run::Command;
using sb::run::HostProcessRunner;
using sb::run::Result;

namespace {

// A python3 with pip, when PyPI answers; else nullopt, having said why.
std::optional<fs::path> pypi_python(HostProcessRunner& r) {
  auto py = sb::run::find_program("python3");
  if (!py || !r.run(Command{{py->string(), "-m", "pip", "--version"}}).ok()) {
    std::cout << "SKIPPED: no python3 with pip: the CUDA wheels are downloaded with pip\n";
    return std::nullopt;
  }
  // As tests/build's pypi_reachable(): one HEAD request to PyPI's simple index.
  Result head = r.run(Command{{py->string(), "-c",
                               "import urllib.request as u; u.urlopen(u.Request("
                               "'https://pypi.org/simple/nvidia-cuda-nvcc/', method='HEAD'), timeout=10)"}});
  if (!head.ok()) {
    std::cout << "SKIPPED: PyPI is not reachable: NVIDIA's CUDA wheels cannot be downloaded\n";
    return std::nullopt;
  }
  return py;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / (name + "-" + std::to_string(sb::process_id()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// CUDA 13.0 for `platform` provisioned from NVIDIA's PyPI wheels into a cache
// of its own, with the options and python that did it (to ask again).
struct Provisioned {
  TempDir cache;
  ToolchainOptions options;
  PythonInfo pip;
  fs::path home;
  explicit Provisioned(const std::string& platform) : cache("sb-cuda-" + platform) {}
};

// Null, having said why, without a python3 with pip or where PyPI does not
// answer (pypi_python).
std::unique_ptr<Provisioned> provision_from_pypi(HostProcessRunner& runner, const std::string& platform) {
  auto py = pypi_python(runner);
  if (!py) return nullptr;
  auto p = std::make_unique<Provisioned>(platform);
  p->options.cache_dir = p->cache.path;
  p->pip.executable = *py;
  p->home = provision_cuda(runner, p->options, p->pip, CudaVersion{13, 0}, platform);
  return p;
}

// Nothing runs: a filled entry is returned as it is.
struct NoRunner : sb::run::ProcessRunner {
  int calls = 0;
  Result run(const Command&) override {
    ++calls;
    return Result{1, "", "ran", true, 0};
  }
};

// The entry and nothing beside it: no download folder, no temporary.
void check_cache_is_clean(const fs::path& cache, const fs::path& home) {
  CHECK_FALSE(fs::exists(home / ".downloads"));
  for (const auto& e : fs::directory_iterator(cache / "cuda")) {
    INFO(e.path());
    CHECK((e.path() == home || e.path().extension() == ".lock"));
  }
}

// wine64 (or wine) on PATH or in Debian's /usr/lib/wine.
std::optional<fs::path> find_wine() {
  for (const char* name : {"wine64", "wine"})
    if (auto w = sb::run::find_program(name)) return w;
  if (fs::exists("/usr/lib/wine/wine64")) return fs::path("/usr/lib/wine/wine64");
  return std::nullopt;
}

// A Windows program under wine, in a prefix of its own (made on first use).
Result under_wine(HostProcessRunner& r, const fs::path& wine, const fs::path& prefix, const fs::path& cwd,
                  std::vector<std::string> argv) {
  argv.insert(argv.begin(), wine.string());
  Command c(argv);
  c.cwd = cwd;
  c.env["WINEPREFIX"] = prefix.string();
  c.env["WINEDEBUG"] = "-all";
  c.env["WINEDLLOVERRIDES"] = "mscoree,mshtml=";
  Result res = r.run(c);
  // wine itself now and then faults as a process exits under load (see
  // wine/run_wine.sh): once more, then the answer stands.
  if (res.err.find("wine: Unhandled") != std::string::npos || res.out.find("wine: Unhandled") != std::string::npos)
    res = r.run(c);
  return res;
}

// sm_90 SASS from a hand-written PTX kernel (no host compiler needed).
const char* kProbePtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry probe(.param .u64 out)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, 7;
  st.global.u32 [%rd2], %r1;
  ret;
}
)";

}  // namespace

TEST_CASE("CUDA 13.0 for win_amd64 from NVIDIA's PyPI wheels: every file nvcc.exe and link.exe look for", "[posix]") {
  HostProcessRunner runner;
  auto cuda = provision_from_pypi(runner, "win_amd64");
  if (!cuda) return;
  const TempDir& cache = cuda->cache;
  const fs::path& home = cuda->home;
  CHECK(home == cache.path / "cuda" / "13.0");

  // What nvcc.exe runs, reads and passes on, and what link.exe links.
  for (const char* f : {"bin/nvcc.exe",
                        "bin/nvcc.profile",
                        "bin/ptxas.exe",
                        "bin/cudafe++.exe",
                        "bin/fatbinary.exe",
                        "bin/nvlink.exe",
                        "bin/crt/link.stub",
                        "nvvm/bin/cicc.exe",
                        "nvvm/libdevice/libdevice.10.bc",
                        "include/cuda_runtime.h",
                        "include/cuda_runtime_api.h",
                        "include/cuda_fp16.h",
                        "include/cuda_bf16.h",
                        "include/cuda_fp8.h",
                        "include/cudaTypedefs.h",
                        "include/crt/host_config.h",
                        "include/crt/host_defines.h",
                        "include/crt/host_runtime.h",
                        "include/cccl/cuda/std/cstdint",
                        "include/cccl/cuda/std/type_traits",
                        "include/cccl/cub/cub.cuh",
                        "include/cccl/thrust/version.h",
                        "include/cccl/nv/target",
                        "lib/x64/cudart_static.lib",
                        "lib/x64/cudart.lib",
                        "lib/x64/cuda.lib"}) {
    INFO(f);
    CHECK(fs::is_regular_file(home / f));
  }

  // nvcc.profile (the wheel's own) names the home's directories relative to
  // bin/ ($(TOP)); each one it names is there.
  const std::string profile = sb::read_file(home / "bin/nvcc.profile");
  INFO(profile);
  for (const char* named : {"$(TOP)/nvvm/bin", "$(TOP)/nvvm/libdevice", "\"-I$(TOP)/include\"",
                            "\"-I$(TOP)/include/cccl\"", "\"/LIBPATH:$(TOP)/lib/$(_WIN_PLATFORM_)\""})
    CHECK(profile.find(named) != std::string::npos);
  for (const char* dir : {"nvvm/bin", "nvvm/libdevice", "include", "include/cccl", "lib/x64"}) {
    INFO(dir);
    CHECK(fs::is_directory(home / dir));
  }

  // The tools are x64 Windows programs that load no DLL but Windows' own:
  // nothing else of CUDA has to be on PATH for them.
  const std::set<std::string> system = {"kernel32.dll", "user32.dll", "advapi32.dll", "ole32.dll", "shell32.dll"};
  for (const char* exe : {"bin/nvcc.exe", "bin/ptxas.exe", "bin/cudafe++.exe", "bin/fatbinary.exe", "bin/nvlink.exe",
                          "nvvm/bin/cicc.exe"}) {
    INFO(exe);
    auto src = sb::binary::FileSource::open(home / exe);
    sb::Findings findings;
    auto pe = sb::binary::PeFile::parse(*src, findings);
    REQUIRE(pe);
    CHECK(pe->info().platform == "win_amd64");
    CHECK_FALSE(pe->info().is_dll);
    for (std::string dll : pe->info().imports) {
      for (auto& ch : dll) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      INFO(dll);
      CHECK(system.count(dll) == 1);
    }
  }

  // No symlink anywhere (a Windows cache cannot count on them) and no
  // Linux-only layout (targets/, lib64).
  for (const auto& e : fs::recursive_directory_iterator(home)) {
    INFO(e.path());
    CHECK_FALSE(e.is_symlink());
  }
  CHECK_FALSE(fs::exists(home / "targets"));
  CHECK_FALSE(fs::exists(home / "lib64"));
  check_cache_is_clean(cache.path, home);

  // Filled once: asked again, nothing runs.
  NoRunner none;
  CHECK(provision_cuda(none, cuda->options, cuda->pip, CudaVersion{13, 0}, "win_amd64") == home);
  CHECK(none.calls == 0);

  // nvcc.exe compiles nothing without cl.exe ("Cannot find compiler 'cl.exe'
  // in PATH", even for a PTX input), which is not here.  What runs without
  // it does, under wine: nvcc.exe's version, ptxas.exe and fatbinary.exe.
  auto wine = find_wine();
  if (!wine) {
    std::cout << "note: no wine here: the Windows tools were checked, not run\n";
    return;
  }
  const fs::path prefix = cache.path / "wineprefix";
  const fs::path work = cache.path / "probe";
  fs::create_directories(work);
  sb::write_file_atomic(work / "probe.ptx", kProbePtx);
  Result version = under_wine(runner, *wine, prefix, work, {(home / "bin/nvcc.exe").string(), "--version"});
  INFO(version.out + version.err);
  REQUIRE(version.ok());
  auto v = parse_nvcc_version(version.out);
  REQUIRE(v);
  CHECK(v->release_str() == "13.0");
  Result ptxas = under_wine(runner, *wine, prefix, work,
                            {(home / "bin/ptxas.exe").string(), "-arch=sm_90", "probe.ptx", "-o", "probe.cubin"});
  INFO(ptxas.out + ptxas.err);
  REQUIRE(ptxas.ok());
  Result fatbinary = under_wine(
      runner, *wine, prefix, work,
      {(home / "bin/fatbinary.exe").string(), "--create=probe.fatbin", "--image3=kind=elf,sm=90,file=probe.cubin"});
  INFO(fatbinary.out + fatbinary.err);
  REQUIRE(fatbinary.ok());
  // The fatbinary holds the probe kernel as sm_90 SASS.
  const std::string fatbin = sb::read_file(work / "probe.fatbin");
  sb::binary::MemorySource src(fatbin);
  sb::Findings findings;
  auto entries = sb::binary::parse_fatbin_section(src, 0, fatbin.size(), findings);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].arch_name() == "sm_90");
  std::string cubin, error;
  REQUIRE(sb::binary::fatbin_payload(src, entries[0], 1 << 20, cubin, error));
  CHECK(sb::binary::cubin_kernels(cubin, findings) == std::vector<std::string>{"probe"});
  // wine's server for this prefix goes before the prefix does.
  auto wineserver = wine->parent_path() / (wine->filename() == "wine64" ? "wineserver64" : "wineserver");
  if (!fs::exists(wineserver)) wineserver = wine->parent_path() / "wineserver";
  if (fs::exists(wineserver)) {
    Command k({wineserver.string(), "-k"});
    k.env["WINEPREFIX"] = prefix.string();
    runner.run(k);
  }
}

TEST_CASE("CUDA 13.0 for linux_x86_64 from NVIDIA's PyPI wheels: the home nvcc compiles a kernel with", "[posix]") {
  HostProcessRunner runner;
  auto cuda = provision_from_pypi(runner, "linux_x86_64");
  if (!cuda) return;
  const TempDir& cache = cuda->cache;
  const fs::path& home = cuda->home;
  for (const char* f :
       {"bin/nvcc", "bin/nvcc.profile", "bin/ptxas", "bin/cudafe++", "bin/fatbinary", "bin/nvlink", "nvvm/bin/cicc",
        "nvvm/libdevice/libdevice.10.bc", "targets/x86_64-linux/include/cuda_runtime.h",
        "targets/x86_64-linux/include/crt/host_config.h", "targets/x86_64-linux/include/cccl/cuda/std/cstdint",
        "lib64/libcudart_static.a", "lib64/libcudart.so"}) {
    INFO(f);
    CHECK(fs::exists(home / f));
  }
  check_cache_is_clean(cache.path, home);
  CHECK(query_nvcc(runner, home / "bin/nvcc").release_str() == "13.0");
  // nvcc finds cicc, ptxas, fatbinary, the runtime's and CCCL's headers
  // through nvcc.profile and the links provision_cuda made.
  const fs::path work = cache.path / "probe";
  fs::create_directories(work);
  sb::write_file_atomic(
      work / "probe.cu",
      "#include <cuda_fp16.h>\n#include <cuda/std/cstdint>\n"
      "__global__ void probe(__half* x, cuda::std::int32_t n) { if (threadIdx.x < n) x[0] = x[1]; }\n");
  Command nvcc({(home / "bin/nvcc").string(), "-c", "-arch=sm_90", "probe.cu", "-o", "probe.o"});
  nvcc.cwd = work;
  Result r = runner.run(nvcc);
  INFO(r.out + r.err);
  CHECK(r.ok());
  CHECK(fs::file_size(work / "probe.o") > 0);
}
