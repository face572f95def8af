// Content-addressed object keys: what makes two compiles interchangeable.
//
// A kernel object depends on its source, every header it includes from the
// repository (followed transitively), the compiler and its version, and the
// flags and archs it was compiled with.  Hashing exactly those gives a key
// that every row, profile and later build computes identically, so the
// object at <cache>/objects/<key>.o is compiled once and reused.  Paths
// enter the key relative to the repository root, so two checkouts share.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::plan {

// Reads a file for the scanner; nullopt when it does not exist.  Tests pass
// an in-memory map; builds pass read_disk_file.
using ReadFileFn = std::function<std::optional<std::string>(const std::filesystem::path&)>;
std::optional<std::string> read_disk_file(const std::filesystem::path& path);

// The targets of `#include "x"` and `#include <x>` lines, in order
// (comments and string contents elsewhere are not parsed: a conservative
// over-approximation only costs a recompile).
std::vector<std::string> scan_includes(std::string_view text);

// The source and every file it includes that resolves inside the given
// include directories (or beside the including file for "..." includes),
// transitively; sorted, without duplicates.  Headers outside them (CUDA,
// the C++ library) are covered by the compiler version in the key.
std::vector<std::filesystem::path> include_closure(const std::filesystem::path& source,
                                                   const std::vector<std::filesystem::path>& include_dirs,
                                                   const ReadFileFn& read);

struct ObjectKeyInput {
  std::filesystem::path source;                     // absolute
  std::filesystem::path repo_root;                  // paths are hashed relative to it
  std::vector<std::filesystem::path> include_dirs;  // absolute
  std::string compiler;                             // "nvcc 13.0.88 / gcc 12.2.0"
  std::vector<std::string> flags;                   // path-free flags, archs included
  std::string extra;                                // anything else the object depends on
};

// Hex SHA-256 over a versioned, length-prefixed encoding of the inputs and
// the contents of include_closure().  Throws IoError when the source is missing.
std::string object_key(const ObjectKeyInput& in, const ReadFileFn& read);

}  // namespace sb::plan
