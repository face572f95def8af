// Everything a row needs on this machine, found or provisioned: CUDA (nvcc of
// the row's version), the row's torch build, a host compiler nvcc accepts,
// and Python headers.  `sagebuild doctor` prints the same checks.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/build/cuda.h"
#include "sagebuild/build/host_compiler.h"
#include "sagebuild/build/kernel_manifest.h"
#include "sagebuild/build/plan.h"
#include "sagebuild/build/process.h"
#include "sagebuild/build/python_env.h"
#include "sagebuild/build/torch.h"
#include "sagebuild/matrix/matrix.h"

namespace sb::build {

struct ToolchainOptions {
  std::optional<std::filesystem::path> cuda_home;      // --cuda-home
  std::optional<std::filesystem::path> cuda_home_env;  // $CUDA_HOME
  std::optional<std::filesystem::path> python;         // --python (else python3 on PATH)
  std::optional<std::filesystem::path> host_compiler;  // --host-compiler (else c++, g++)
  std::vector<std::filesystem::path> torch_wheels;     // --torch-wheel: local wheels to use
  std::filesystem::path cache_dir;
  std::string path_env;
  bool provision = true;  // false: report what would be downloaded instead (dry run, doctor)
  // Dry run: a CUDA or torch that `build` would provision is planned at its
  // cache location (versions from the row) instead of being an error, so the
  // plan and the exact commands print on a machine that has neither yet.
  bool plan_only = false;
  // Windows rows: pass -allow-unsupported-compiler to nvcc (an MSVC newer
  // than the row's CUDA knows).  Off unless asked (--allow-unsupported-compiler).
  bool allow_unsupported_compiler = false;
};

// One line of `sagebuild doctor`.
struct Check {
  bool ok = false;
  std::string what;    // "CUDA 13.0"
  std::string found;   // "/usr/local/cuda/bin/nvcc 13.0.88 (PATH)"
  std::string fix;     // how to fix it, when not ok
};

struct Toolchain {
  CudaToolkit cuda;
  TorchInstall torch;       // the headers and libraries the binding compiles and links against
  // The row's torch release, checked to be the CUDA build the row names.
  // Equal to torch's for classic rows; a stable-ABI row may compile against
  // another release >= the stable minimum and check its own from the index.
  std::string row_torch_cuda;
  std::string row_torch_check;  // where that fact was read
  std::filesystem::path host_cxx;
  CompilerId host;
  PythonInfo python;        // the headers' Python
  std::optional<PythonInfo> torch_python;  // a Python that can import this torch (for the smoke test)
  std::vector<Check> checks;

  RowToolchain planner_view() const;
};

class ToolchainResolver {
 public:
  ToolchainResolver(ProcessRunner& runner, ToolchainOptions options);

  // Finds or provisions everything for the row; throws UsageError listing
  // every problem with its fix.
  // `stable`: the stable-ABI binding serves this row (families.json).
  Toolchain resolve(const sb::matrix::Row& row, const StableAbiBinding* stable = nullptr);

  // The checks alone, never throwing and never downloading (doctor).
  std::vector<Check> diagnose(const sb::matrix::Row& row);

 private:
  struct Partial;
  Partial discover(const sb::matrix::Row& row, bool provision, const StableAbiBinding* stable);
  std::optional<PythonInfo> python_named(const std::string& exe);

  ProcessRunner& runner_;
  ToolchainOptions opt_;
  std::map<std::string, std::optional<PythonInfo>> pythons_;  // memoized queries
};

// The torch wheel's unpacked tree in the cache: <cache>/torch/<version>-cu<XY>-<sha16>/torch.
// Downloads with `<python> -m pip download` unless a --torch-wheel matches.
TorchInstall provision_torch(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& pip_python,
                             const sb::matrix::Row& row);
// An already provisioned torch for the row, if any.
std::optional<std::filesystem::path> cached_torch(const std::filesystem::path& cache_dir, const sb::matrix::Row& row);

// Any torch in the cache or `python`'s, of a release >= `min` built for
// `cuda`: the headers and libraries a stable-ABI binding can compile against.
std::optional<TorchInstall> stable_abi_torch(const std::filesystem::path& cache_dir, const std::optional<PythonInfo>& python,
                                             const std::string& cuda, const TorchMinor& min);

// torch/version.py of the row's torch wheel on the index, read with range
// requests; throws IoError (RangeNotSupported; no network; not on the index)
// when it cannot tell, UsageError when the wheel is not the row's CUDA build.
std::string remote_torch_version_py(ProcessRunner& runner, const ToolchainOptions& opt, const sb::matrix::Row& row);

// <cache>/cuda/<X.Y>: NVIDIA's wheels unpacked into a CUDA home nvcc accepts.
std::filesystem::path provision_cuda(ProcessRunner& runner, const ToolchainOptions& opt,
                                     const PythonInfo& pip_python, const std::string& cuda);

// The manylinux platform tags pip may pick a wheel for, for a row's platform tag.
std::vector<std::string> pip_platforms(const std::string& platform_tag);

}  // namespace sb::build
