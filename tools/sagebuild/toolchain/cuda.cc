#include "sagebuild/toolchain/cuda.h"

#include <regex>

#include "sagebuild/common/error.h"

namespace sb::toolchain {

namespace fs = std::filesystem;

std::optional<CudaVersion> parse_nvcc_version(std::string_view text) {
  // "Cuda compilation tools, release 13.0, V13.0.88"
  static const std::regex re(R"(release (\d+)\.(\d+), V(\d+)\.(\d+)\.(\d+))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, re)) return std::nullopt;
  CudaVersion v;
  v.major = std::stoi(m[3].str());
  v.minor = std::stoi(m[4].str());
  v.patch = std::stoi(m[5].str());
  // The "release" and the "V" numbers agree in every nvcc; when not, distrust both.
  if (std::stoi(m[1].str()) != v.major || std::stoi(m[2].str()) != v.minor) return std::nullopt;
  return v;
}

fs::path CudaToolkit::lib_dir() const {
  for (const char* d : {"lib64", "lib", "targets/x86_64-linux/lib"})
    if (fs::exists(home / d / "libcudart.so")) return home / d;
  return home / "lib64";
}

CudaVersion query_nvcc(ProcessRunner& runner, const fs::path& nvcc) {
  Result r = runner.run(Command{{nvcc.string(), "--version"}});
  if (!r.ok())
    throw UsageError(nvcc.string() + " --version failed (exit " + std::to_string(r.exit_code) + "): " + r.err);
  auto v = parse_nvcc_version(r.out);
  if (!v)
    throw UsageError(nvcc.string() +
                     " --version printed no \"release X.Y, VX.Y.Z\" line; got: " + r.out.substr(0, 200));
  return *v;
}

CudaFound find_cuda(ProcessRunner& runner, const CudaSearch& search, const CudaVersion& want) {
  CudaFound found;
  std::vector<std::pair<std::string, fs::path>> places;
  if (search.cuda_home_flag) places.emplace_back("--cuda-home", *search.cuda_home_flag / "bin/nvcc");
  if (search.cuda_home_env) places.emplace_back("CUDA_HOME", *search.cuda_home_env / "bin/nvcc");
  if (auto p = run::find_program("nvcc", search.path_env)) places.emplace_back("PATH", *p);
  for (const auto& [origin, nvcc] : places) {
    CudaCandidate c{origin, nvcc, std::nullopt, {}};
    std::error_code ec;
    if (!fs::exists(nvcc, ec)) {
      c.problem = "no nvcc at " + nvcc.string();
    } else {
      try {
        c.version = query_nvcc(runner, nvcc);
        if (c.version->release() != want.release())
          c.problem = "nvcc " + c.version->full_str() + ", the row needs CUDA " + want.release_str();
      } catch (const UsageError& e) {
        c.problem = e.what();
      }
    }
    if (c.problem.empty() && !found.toolkit) {
      // nvcc may be reached through a symlink (/usr/bin/nvcc): the home is
      // the directory above the real bin/.
      fs::path real = fs::weakly_canonical(nvcc, ec);
      if (ec) real = nvcc;
      found.toolkit = CudaToolkit{real.parent_path().parent_path(), real, *c.version, origin};
    }
    found.candidates.push_back(std::move(c));
    // A flag the user gave is a demand, not a hint: stop there.
    if (origin == "--cuda-home") break;
  }
  return found;
}

std::string cuda_provision_blocker(const CudaVersion& want) {
  if (want.major == 13) return "";
  if (want.major == 12)
    // Read off the wheels themselves (2026-11-23; win_amd64 2026-11-27): nvidia-cuda-nvcc-cu12
    // 12.8.93 and 12.9.86 hold bin/ptxas (ptxas.exe), libNVVM (nvvm64_40_0.dll) and
    // libdevice, but no nvcc driver and no cicc, and there is no nvidia-nvvm-cu12;
    // nvidia-cuda-runtime-cu12 has no libcudart_static.a.
    return "PyPI has no nvcc for CUDA " + want.release_str() +
           ": NVIDIA's CUDA 12 wheels (nvidia-cuda-nvcc-cu12) carry "
           "ptxas and libNVVM only, not the nvcc driver or cicc";
  return "only CUDA 13.x can be provisioned from PyPI, not CUDA " + want.release_str();
}

std::vector<std::string> cuda_home_files(const std::string& platform) {
  // Read off nvcc.profile and the CUDA 13.0 wheels of both platforms (nvcc
  // 13.0.88, runtime 13.0.96, cccl 13.0.85; 2026-11-27).  The headers are the
  // ones our kernels include, the runtime's own (crt/; cccl's nv/target, which
  // cuda_fp16.h includes) and CCCL's three libraries.
  const std::vector<std::string> headers = {"cuda_runtime.h",     "cuda_fp16.h",          "cuda_bf16.h",
                                            "cuda_fp8.h",         "cudaTypedefs.h",       "crt/host_config.h",
                                            "crt/host_defines.h", "cccl/nv/target",       "cccl/cuda/std/cstdint",
                                            "cccl/cub/cub.cuh",   "cccl/thrust/version.h"};
  std::string exe, include;
  std::vector<std::string> files;
  if (platform == "linux_x86_64") {
    // nvcc.profile: -I$(TOP)/targets/x86_64-linux/include, -isystem .../include/cccl,
    // -L$(TOP)/targets/x86_64-linux/lib; sagebuild's own link: lib64/.
    include = "targets/x86_64-linux/include/";
    files = {"targets/x86_64-linux/lib/libcudart_static.a", "lib64/libcudart_static.a", "lib64/libcudart.so"};
  } else if (platform == "win_amd64") {
    // nvcc.profile: "-I$(TOP)/include" "-I$(TOP)/include/cccl",
    // /LIBPATH:$(TOP)/lib/$(_WIN_PLATFORM_) (x64); the link: cudart_static.lib
    // (families.json), cudart.lib, cuda.lib (a source that links the driver).
    exe = ".exe";
    include = "include/";
    files = {"lib/x64/cudart_static.lib", "lib/x64/cudart.lib", "lib/x64/cuda.lib"};
  } else {
    return {};
  }
  // The driver, its profile, and the tools it runs (cicc and libdevice where
  // nvcc.profile's CICC_PATH and NVVMIR_LIBRARY_DIR say; crt/link.stub for a
  // device link).
  for (const char* tool : {"nvcc", "ptxas", "cudafe++", "fatbinary", "nvlink"})
    files.push_back(std::string("bin/") + tool + exe);
  files.insert(files.end(),
               {"bin/nvcc.profile", "bin/crt/link.stub", "nvvm/bin/cicc" + exe, "nvvm/libdevice/libdevice.10.bc"});
  for (const auto& h : headers) files.push_back(include + h);
  return files;
}

bool cuda_provisioned_from_pypi(const CudaVersion& want, const std::string& platform) {
  return !cuda_home_files(platform).empty() && cuda_provision_blocker(want).empty();
}

std::vector<std::string> cuda_wheel_names(const CudaVersion& want) {
  const std::string blocker = cuda_provision_blocker(want);
  if (!blocker.empty())
    throw UsageError("cannot provision CUDA " + want.release_str() + " from PyPI: " + blocker + "; install the CUDA " +
                     want.release_str() + " toolkit and pass --cuda-home (or set CUDA_HOME)");
  if (want.major == 13)
    return {"nvidia-cuda-nvcc", "nvidia-cuda-runtime", "nvidia-cuda-cccl", "nvidia-cuda-crt", "nvidia-nvvm"};
  throw UsageError("cannot provision CUDA " + want.release_str() +
                   " from PyPI: only CUDA 12.x and 13.x wheels are known; install it and pass "
                   "--cuda-home");
}

std::vector<std::string> cuda_wheel_requirements(const CudaVersion& want) {
  std::vector<std::string> reqs;
  for (const auto& n : cuda_wheel_names(want)) reqs.push_back(n + "==" + want.release_str() + ".*");
  return reqs;
}

}  // namespace sb::toolchain
