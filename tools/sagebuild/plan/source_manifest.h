// matrix/sources/<kind>.yaml: an upstream source tree's own build, as data.  What
// upstream's setup.py compiles into which extension module, for which archs,
// with which flags and libraries; the Python package staged beside them; the
// files that recognise such a tree.  Our own tree is described by
// kernels/families.json (kernel_manifest.h); both become ExtensionSpecs
// (extension.h), so the planner and the row pipeline never ask which.
//
// Every path is relative to the checkout (`sagebuild --source-dir`).  An
// extension gives exactly one of
//   min_arch: "8.0"     built for every row arch at or above it, or
//   archs: ["9.0a"]     exactly these targets, where the row lists their base arch,
// as a kernel family does, and is left out of a row where it has no target
// (as setup.py leaves it out).  Mistakes are ConfigErrors at file:line:column.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::plan {

struct SourceExtension {
  std::string module;                // "sageattention._qattn_sm90", "fp4attn_cuda": the import name
  std::vector<std::string> sources;  // .cu to nvcc, .cpp/.cc/.cxx to the host compiler
  std::optional<Arch> min_arch;
  std::vector<Arch> archs;
  std::string symbol_marker;            // a substring of its kernels' names, for verify's B6
  std::vector<std::string> libraries;   // linked besides torch's: "cuda" (the driver, through CUDA's stub)
  std::vector<std::string> exports;     // names the smoke test finds on the imported module
  std::vector<std::string> nvcc_flags;  // after the manifest's own
  std::vector<std::string> cxx_flags;   // after the manifest's own
  // peak_memory_gib: what nvcc compiling one of its .cu for one arch takes
  // at its peak (measured); 0 when not given.  Bounds how many run at once.
  double peak_memory_gib = 0;
  SourceLocation where;
};

struct SourceManifest {
  std::filesystem::path path;              // where it was read from
  std::string kind;                        // "upstream-sageattention": what matrix packages name as `source:`
  std::string describes;                   // "thu-ml/SageAttention at d1a57a5": what it was written against
  std::vector<std::string> markers;        // files that are all there in such a tree
  std::string package;                     // the Python package's directory: "sageattention"
  std::vector<std::string> package_files;  // file-name globs staged from it ("*.py"); empty: every file
  std::string summary;                     // METADATA Summary
  std::string license_expression;          // "Apache-2.0"
  std::string license_file;                // "LICENSE"
  // Capabilities the tree's build compiles as another target (setup.py:
  // 9.0 as sm_90a).  Applied to the row's archs before the extensions' own.
  std::map<Arch, Arch> arch_targets;
  bool ptx = false;  // embed the row's PTX arch (setup.py: only for "+PTX")
  std::vector<std::string> include_dirs;
  std::vector<toolchain::HeaderPackage> headers;  // from PyPI, pinned (CUTLASS)
  // CUDA libraries whose headers the tree includes ("cublas": torch's
  // ATen/cuda/CUDAContext.h includes cublas_v2.h), headers only: provisioned
  // for each row's CUDA from NVIDIA's wheels (toolchain::cuda_library_headers).
  std::vector<std::string> cuda_libraries;
  std::vector<std::string> nvcc_flags;      // every .cu
  std::vector<std::string> cxx_flags;       // every host unit
  std::vector<SourceExtension> extensions;  // in file order
  SourceLocation kind_where;
};

// Parses the YAML text; throws ConfigError at the offending key or value.
SourceManifest parse_source_manifest(const std::string& text, const std::string& file);
SourceManifest load_source_manifest(const std::filesystem::path& path);

// The markers of `m` missing from `tree` (empty: it is that kind of tree).
std::vector<std::string> missing_markers(const SourceManifest& m, const std::filesystem::path& tree);

}  // namespace sb::plan
