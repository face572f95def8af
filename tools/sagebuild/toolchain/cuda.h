// The CUDA toolkit a row compiles with: found (--cuda-home, CUDA_HOME, PATH)
// or provisioned from NVIDIA's wheels on PyPI.  The version is always the one
// `nvcc --version` reports, never the one a path or a flag suggests.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/matrix/version.h"
#include "sagebuild/run/process.h"

namespace sb::toolchain {

using matrix::CudaVersion;
using run::Command;
using run::ProcessRunner;
using run::Result;

// Parses the text of `nvcc --version` ("release 13.0, V13.0.88" -> 13.0.88);
// nullopt when no "release X.Y, VX.Y.Z" line.
std::optional<CudaVersion> parse_nvcc_version(std::string_view text);

struct CudaToolkit {
  std::filesystem::path home;  // contains bin/nvcc, include/, lib64/ (or lib/)
  std::filesystem::path nvcc;
  CudaVersion version;                    // what its nvcc reports ("13.0.88")
  std::string origin;                     // "--cuda-home", "CUDA_HOME", "PATH", "cache (PyPI wheels)"
  std::filesystem::path lib_dir() const;  // where libcudart.so is
};

// Where to look, in order; each candidate is asked for its version.
struct CudaSearch {
  std::optional<std::filesystem::path> cuda_home_flag;
  std::optional<std::filesystem::path> cuda_home_env;
  std::string path_env;
};

struct CudaCandidate {
  std::string origin;
  std::filesystem::path nvcc;
  std::optional<CudaVersion> version;  // nullopt: missing or unreadable
  std::string problem;                 // why it was not used
};

struct CudaFound {
  std::optional<CudaToolkit> toolkit;     // one whose major.minor == want
  std::vector<CudaCandidate> candidates;  // every place looked at
};

// Asks each candidate nvcc for its version and picks the first matching `want` ("13.0").
CudaFound find_cuda(ProcessRunner& runner, const CudaSearch& search, const CudaVersion& want);

// Asks one nvcc; throws UsageError when it does not run or answer.
CudaVersion query_nvcc(ProcessRunner& runner, const std::filesystem::path& nvcc);

// Why CUDA `want` ("12.8") cannot be provisioned from NVIDIA's PyPI wheels, or ""
// when it can (13.x: nvidia-cuda-nvcc carries the whole compiler, on Linux
// and on Windows alike).
std::string cuda_provision_blocker(const CudaVersion& want);

// Every file of a CUDA home that nvcc (its nvcc.profile, the tools it runs,
// the headers it includes) and the extension's link look for, relative to the
// home, for a host of `platform`: "linux_x86_64" (the wheels' tree plus the
// targets/x86_64-linux, lib64 and libcudart.so links a toolkit install has)
// or "win_amd64" (the wheels' tree as it is: nvcc.exe's nvcc.profile names
// include/, include/cccl, lib/x64, nvvm/bin and nvvm/libdevice).  Empty for
// any other platform: sagebuild lays out no CUDA home for it.
std::vector<std::string> cuda_home_files(const std::string& platform);

// Whether `sagebuild build` provisions CUDA `want` from PyPI by itself for a
// row of `platform`: a platform cuda_home_files() knows and no blocker above.
// `sagebuild matrix --format github` tells the workflow so per row, and the
// workflow installs the toolkit of the rows where it cannot (CUDA 12).
bool cuda_provisioned_from_pypi(const CudaVersion& want, const std::string& platform);

// The PyPI distributions that make up a CUDA home for `want` ("13.0" -> the
// CUDA 13 names, the same for every platform); throws UsageError (with
// cuda_provision_blocker's reason and the fix) for a CUDA that PyPI cannot provide.
std::vector<std::string> cuda_wheel_names(const CudaVersion& want);

// What pip downloads for `want`: each of cuda_wheel_names() pinned to the
// row's release, "nvidia-cuda-nvcc==13.0.*" (pip takes each one's newest
// 13.0.x for the platform asked for).  Throws as cuda_wheel_names().
std::vector<std::string> cuda_wheel_requirements(const CudaVersion& want);

}  // namespace sb::toolchain
