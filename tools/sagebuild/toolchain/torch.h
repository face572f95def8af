// The PyTorch release a row's binding compiles and links against: headers
// (torch/include), libraries (torch/lib), the CUDA it was built for and its
// C++ ABI, read from the files of the torch build itself.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/matrix/version.h"

namespace sb::toolchain {

struct TorchInstall {
  std::filesystem::path root;  // the `torch` package directory: include/, lib/, version.py
  std::string version;         // torch.__version__ as written ("2.11.0+cu130")
  std::string cuda;            // torch.version.cuda ("13.0"); empty for a CPU build
  bool cxx11_abi = true;
  std::string abi_source;  // which file told us the ABI
  std::string origin;      // "python /usr/bin/python3", "cache (torch wheel ...)"

  std::string public_version() const;  // "2.11.0" (local label dropped)
  // The release, parsed (nullopt for a version that is not one: "2.12.0a0+git...").
  std::optional<matrix::TorchVersion> release() const { return matrix::TorchVersion::parse_installed(version); }
  std::filesystem::path include_dir() const { return root / "include"; }
  std::filesystem::path api_include_dir() const { return root / "include/torch/csrc/api/include"; }
  std::filesystem::path lib_dir() const { return root / "lib"; }
};

// A `name = 'value'` (or `name: Optional[str] = 'value'`) assignment in
// torch/version.py; nullopt when absent or None.
std::optional<std::string> parse_version_py(std::string_view text, std::string_view name);

// `_GLIBCXX_USE_CXX11_ABI=0|1` in TorchConfig.cmake / Caffe2Config.cmake
// (torch < 2.7 writes it there); nullopt when the file does not say.
std::optional<bool> parse_cmake_cxx11_abi(std::string_view text);

// Whether libc10.so's exported names use the new-ABI std::string
// ("St7__cxx11"); nullopt when no std::string appears in it at all.
std::optional<bool> cxx11_abi_from_library_bytes(std::string_view bytes);

// torch's libraries a binding links, base names in link order: the classic
// binding's (the C++ API: c10, torch, ...), or the stable-ABI binding's (the
// C shim in torch_cpu, and torch_cuda for the current stream).
const std::vector<std::string>& torch_link_libraries(bool stable_abi);

// Reads version.py, the cmake files and libc10.so under a torch directory;
// throws UsageError naming what is missing.
TorchInstall read_torch_dir(const std::filesystem::path& torch_dir);

}  // namespace sb::toolchain
