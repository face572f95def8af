// kernels/families.json: which CUDA sources make up each kernel family, which
// archs each family is built for, and the torch-including binding.
//
// A family gives exactly one of
//   "min_arch": "8.9"       built for every row arch >= 8.9 (SASS, plus the
//                           row's PTX arch when it qualifies), or
//   "archs": ["9.0a"]       exactly these targets, each built only when the
//                           row lists its base arch (9.0 or 9.0a), SASS only:
//                           arch-specific code (wgmma, setmaxnreg) has no
//                           forward-compatible PTX and runs on that arch alone.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/arch.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/toolchain/torch.h"

namespace sb::plan {

struct KernelFamily {
  std::string name;                  // "pv_fp8"
  std::vector<std::string> sources;  // repository-relative .cu files
  std::optional<Arch> min_arch;      // either: compiled for the row archs >= this
  std::string symbol_marker{};       // substring of its kernels' names (build_info.json); optional
  std::vector<Arch> archs{};         // or: exactly these targets ("9.0a"), in the file's order
};

// binding.stable_abi: the binding built against the PyTorch stable ABI.  Rows
// whose torch is >= min_torch compile `source` with
// -DTORCH_TARGET_VERSION=<target_version>; the object and the extension do
// not depend on the torch release, so every such row shares them.
struct StableAbiBinding {
  std::string source;  // repository-relative
  // Minor releases ("2.10"): a patch written in the file is dropped.
  matrix::TorchVersion min_torch;       // the first release whose rows use it
  matrix::TorchVersion target_version;  // TORCH_TARGET_VERSION; <= min_torch

  // "0x020A000000000000" (torch/csrc/stable/version.h encoding).
  std::string target_version_macro() const;
};

struct KernelManifest {
  std::filesystem::path path;          // where it was read from
  std::vector<KernelFamily> families;  // sorted by name
  std::vector<std::string> binding_sources;
  std::vector<std::string> include_dirs;  // repository-relative
  std::vector<std::string> nvcc_flags;    // flags for every kernel source (default: -std=c++17 -O3)
  std::vector<std::string> cxx_flags;     // flags for the binding (default: -std=c++17 -O2 -fPIC -fvisibility=hidden)
  bool cudart_static = false;             // "link": {"cudart": "static" | "shared"} (default shared)
  std::vector<std::string> binding_defines;    // "NAME=VALUE" for the binding (Py_LIMITED_API is the row's)
  std::optional<StableAbiBinding> stable_abi;  // absent: every row uses binding_sources

  // The stable-ABI binding when a row with this torch release uses it.
  const StableAbiBinding* stable_binding_for(const matrix::TorchVersion& torch) const;
};

// Parses the JSON text; throws ConfigError (naming `source_name` and the key)
// on anything malformed: missing keys, wrong types, bad arch strings.
KernelManifest parse_kernel_manifest(std::string_view json, const std::string& source_name);
KernelManifest load_kernel_manifest(const std::filesystem::path& path);

}  // namespace sb::plan
