// Reading the wheels to index: each one's file name (sb::wheel), its
// <pkg>/build_info.json and METADATA's Requires-Python (through the strict
// zip reader), and its SHA-256.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/index/model.h"
#include "sagebuild/wheel/filename.h"

namespace sb::index {

struct TorchCuda {
  std::string torch;  // "2.8.0"
  std::string cuda;   // "12.9"
};

// What the file name says about torch and CUDA: the build tag ("280.129")
// or, failing that, the local version ("+cu128torch2.9.0"); nullopt when
// it uses neither scheme.
std::optional<TorchCuda> torch_cuda_from_filename(const wheel::WheelFilename& name);

// Reads one wheel.  torch/CUDA come from build_info.json when the wheel has
// one, else from the file name.  Throws sb::UsageError naming the file and
// what was expected when the file name is invalid, the archive unreadable, or
// the variant cannot be told; sb::IoError when the file cannot be read.
IndexedWheel scan_wheel(const std::filesystem::path& path);

// Every *.whl under `dir` (recursively: CI artifacts arrive one directory per
// job), sorted by file name.  Two files with one name must be identical
// (same SHA-256), and are then indexed once.  Throws sb::UsageError when
// `dir` has no wheel or holds conflicting copies.
// Directories deeper than kMaxDepth below `dir` are refused (UsageError):
// the walk's memory grows with the square of the depth.
constexpr int kMaxDepth = 32;
std::vector<IndexedWheel> scan_directory(const std::filesystem::path& dir);

// The file as pip and PyPI tell files apart: the normalized project name
// (PEP 503), the normalized version (PEP 440), the build tag, and the tags
// lowercased and sorted.  "SageAttention-2.2-..." and "sageattention-2.2.0-..."
// have one key: the same file to an installer.
std::string wheel_file_key(const std::string& filename);

// Throws UsageError, naming both, when two of `wheels` (new and previous
// together) have different file names with one key (names that differ only
// in case, name normalization or version spelling: PyPI refuses the second,
// and pip would pick either).
void check_distinct_files(const std::vector<IndexedWheel>& wheels);

}  // namespace sb::index
