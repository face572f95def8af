// A kernel-objects directory: the torch-free kernel objects of a CUDA
// release, arch set and platform, compiled once (`sagebuild build --row ID
// --kernels-only --kernel-objects DIR`) and handed to the builds of every
// row of that release (`--kernel-objects DIR`), which then compile only the
// binding and link.  DIR holds <key>.o (.obj) per object and
// kernel-objects.json, which lists each object's unit (family, source,
// targets), its object key (object_key.h), the compiler that made it and the
// file's sha256.
//
// A row takes an object from DIR only when its unit's key, as this checkout
// and toolchain compute it, is the key listed, and the file is the one
// listed; anything else is refused (HandedObjectError), never recompiled
// behind the caller's back and never used stale.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/error.h"
#include "sagebuild/plan/object_key.h"

namespace sb::plan {

inline constexpr const char* kKernelObjectsManifest = "kernel-objects.json";

struct KernelObjectEntry {
  std::string family;                // "quant"
  std::string source;                // checkout-relative, '/'-separated: "kernels/quant.cu"
  std::vector<std::string> targets;  // "9.0", "9.0a"
  std::string key;                   // object_key()
  std::string file;                  // the object's name in the directory: "<key>.o"
  std::string sha256;                // of that file
  std::string compiler;              // "nvcc 13.0.88 / gcc 12.2.0"
  bool operator==(const KernelObjectEntry&) const = default;
};

struct KernelObjects {
  std::vector<std::string> rows;           // the rows the objects were compiled for, sorted
  std::vector<KernelObjectEntry> objects;  // sorted by key, one per key
  bool operator==(const KernelObjects&) const = default;
};

// A handed-over object that cannot be used: missing, another key, altered.
class HandedObjectError : public UsageError {
 public:
  using UsageError::UsageError;
};

// Adds the entry (and row) unless the set has an entry of that key already; keeps the order.
// Entries of the same unit (family, source, targets) and compiler under another key are
// superseded: removed, and their files' names returned (the directory would otherwise keep
// every edit's objects).
std::vector<std::string> add_kernel_object(KernelObjects& set, KernelObjectEntry entry, const std::string& row);

// The manifest's text (JSON), deterministic for a given set.
std::string kernel_objects_json(const KernelObjects& set);
// Parses a manifest; UsageError naming `where` and what is wrong.
KernelObjects parse_kernel_objects(std::string_view text, const std::string& where);
// <dir>/kernel-objects.json, parsed; UsageError when the directory or its
// manifest is missing (saying how to make one).
KernelObjects load_kernel_objects(const std::filesystem::path& dir);

// What a row's build needs of the directory: its unit and the key this build computes for it.
struct WantedObject {
  std::string family;
  std::string source;  // '/'-separated
  std::vector<std::string> targets;
  std::string key;
  std::string row;  // the row being built (for the fix)
};

// The path of the wanted object in `dir`, after checking that the manifest
// lists its key for its unit and that the file there has the listed sha256
// (read with `read`).  HandedObjectError, one line, otherwise: the unit, the
// key expected and the key found (or that none is listed), and how to fix it.
std::filesystem::path handed_object(const KernelObjects& set, const std::filesystem::path& dir,
                                    const WantedObject& wanted, const ReadFileFn& read);

}  // namespace sb::plan
