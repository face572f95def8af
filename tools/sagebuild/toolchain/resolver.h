// What a row's build knows of the machine, and the interface that finds it.
//
// A RowResolver finds (or provisions) a row's toolchain: GnuResolver on Linux
// (gnu_resolver.h), MsvcResolver for win_amd64 rows (msvc_resolver.h).  What
// it returns is all the planner, build_info.json and the smoke test need, the
// same for both: the host toolchain that writes the command lines, and facts.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/host_toolchain.h"
#include "sagebuild/toolchain/python_env.h"
#include "sagebuild/toolchain/torch.h"

namespace sb::toolchain {

using run::Command;
using run::ProcessRunner;
using run::Result;

struct ToolchainOptions {
  std::optional<std::filesystem::path> cuda_home;      // --cuda-home
  std::optional<std::filesystem::path> cuda_home_env;  // $CUDA_HOME
  std::optional<std::filesystem::path> python;         // --python (else python3 / python on PATH)
  std::optional<std::filesystem::path> host_compiler;  // --host-compiler (else c++, g++)
  // Where Red Hat's gcc-toolset-N installs (<root>/gcc-toolset-N/root/usr/bin/g++):
  // searched with g++-N on PATH when the default compiler is one the row's
  // CUDA refuses (gnu_resolver.cc).
  std::filesystem::path gcc_toolset_root = "/opt/rh";
  std::vector<std::filesystem::path> torch_wheels;  // --torch-wheel: local wheels to use
  // --torch-index: the index every row's torch is downloaded from; empty: the
  // row's own (matrix::Row::torch_index, PyTorch's per-CUDA index where PyPI
  // does not serve its build), else pip's ($PIP_INDEX_URL or PyPI).
  std::string torch_index;
  std::filesystem::path cache_dir;
  std::string path_env;
  bool provision = true;  // false: report what would be downloaded instead (dry run, doctor)
  // Dry run: what `build` would provision (or, on Windows, what is not
  // installed) is planned with its cache location or a labelled placeholder
  // instead of being an error, so the plan prints on a machine without it.
  bool plan_only = false;
  // nvcc with -allow-unsupported-compiler (an MSVC newer than the row's CUDA
  // knows).  Off unless asked (--allow-unsupported-compiler).
  bool allow_unsupported_compiler = false;
  // --kernels-only: the torch-free kernels alone are compiled, so the row's
  // torch is neither found nor downloaded (GnuResolver; RowToolchain::torch
  // stays empty).  The MSVC resolver still finds it.
  bool without_torch = false;
};

// One line of the toolchain's log and of `sagebuild doctor`.
struct Check {
  bool ok = false;
  std::string what;   // "CUDA 13.0"
  std::string found;  // "/usr/local/cuda/bin/nvcc 13.0.88 (PATH)"
  std::string fix;    // how to fix it, when not ok
};

// A header-only package a source tree compiles against (CUTLASS), provisioned
// from PyPI at a pinned version like CUDA: its wheel unpacked into the cache,
// these directories of it on the include path.
struct HeaderPackage {
  std::string name;                       // "nvidia-cutlass"
  std::string version;                    // "4.2.0.0": pinned, exactly
  std::vector<std::string> include_dirs;  // inside the wheel: "cutlass_library/source/include"
  // Empty: a pure wheel (platform tag `any`), one cache entry for every
  // platform.  Else the platform ("linux_x86_64", "win_amd64") whose wheel
  // is unpacked (NVIDIA's CUDA library wheels: headers beside binaries).
  // (`{}`: a braced HeaderPackage may leave it out without a warning.)
  std::string platform{};
  std::string requirement() const { return name + "==" + version; }
};

// A HeaderPackage where the compiles find it.
struct ProvisionedHeaders {
  std::string requirement;                          // "nvidia-cutlass==4.2.0.0": what object keys name
  std::vector<std::filesystem::path> include_dirs;  // absolute
};

// The torch whose headers and libraries the binding compiles and links
// against (for a stable-ABI row: possibly another release than the row's).
struct TorchHeaders {
  std::filesystem::path root;  // the `torch` package directory
  std::string version;         // "2.11.0+cu130"
  bool cxx11_abi = true;       // libstdc++'s ABI (Linux)
};

struct RowToolchain {
  std::shared_ptr<const HostToolchain> host;  // the command lines
  std::string nvcc_version;                   // "13.0.88", from nvcc --version
  std::filesystem::path cuda_include;         // <CUDA>/include
  std::filesystem::path cuda_lib;             // where cudart's library is
  TorchHeaders torch;
  std::string row_torch_cuda;              // the CUDA of the row's own torch release, as checked
  std::filesystem::path python_include;    // Python.h's directory
  std::filesystem::path python_lib_dir;    // Windows: python3.lib's directory
  std::string python_version;              // of those headers: "3.12"
  std::optional<PythonInfo> smoke_python;  // makes the smoke test's venv
  bool torch_importable = false;           // smoke_python imports the row's torch
  // Link stubs (<CUDA>/lib64/stubs: libcuda.so) for extensions that link the
  // CUDA driver; empty when the toolkit has none (PyPI's CUDA wheels).
  std::filesystem::path cuda_stubs;
  std::vector<ProvisionedHeaders> headers;  // the header packages the row's source asks for
  std::vector<Check> checks;                // what was found where
  // Some facts are labelled placeholders (a dry run where they cannot be
  // discovered): the plan prints, nothing builds.
  bool placeholders = false;
};

class RowResolver {
 public:
  virtual ~RowResolver() = default;
  // Everything the row needs, found or provisioned; throws UsageError listing
  // every problem with its fix.  `stable_min_torch`: the row's binding uses
  // the stable ABI, whose headers any torch >= it of the row's CUDA has.
  virtual RowToolchain resolve(const matrix::Row& row, const std::optional<matrix::TorchVersion>& stable_min_torch) = 0;
  // The checks alone, never throwing and never downloading (doctor).
  virtual std::vector<Check> diagnose(const matrix::Row& row) = 0;
  // A header package for the row, in the cache (provisioned when absent;
  // in a dry run, where it would be), and the log's line about it in
  // `check`.  Throws UsageError.
  virtual ProvisionedHeaders headers(const HeaderPackage& package, const matrix::Row& row, Check& check) = 0;
  // Runs ninja and so every compiler (on Windows: in vcvars64's environment).
  virtual ProcessRunner& build_runner() = 0;
};

}  // namespace sb::toolchain
