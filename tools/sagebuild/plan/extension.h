// What one row's wheel is built from, whatever described it: its extension
// modules (an ExtensionSpec each: the CUDA units of its kernel families with
// their targets, the host C++ units and what of torch they depend on, what
// the link takes) and the Python package staged beside them (RowSpec).  The
// planner (plan.h) turns them into commands through the row's host
// toolchain, so each kind of source description only has to produce them:
// our own tree's kernels/families.json (one abi3 or classic `_C` module) and
// an upstream tree's matrix/sources/<kind>.yaml (pybind11 modules, one per
// extension its setup.py builds).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/common/arch.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/plan/kernel_manifest.h"
#include "sagebuild/plan/source_manifest.h"
#include "sagebuild/toolchain/host_toolchain.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::plan {

// Compile flags as the manifest means them, before a toolchain spells them.
struct CompileFlags {
  toolchain::CxxStandard standard = toolchain::CxxStandard::cxx17;
  std::vector<std::string> device_flags;  // nvcc's own (CUDA units only)
  std::vector<std::string> host_flags;    // the host compiler's, in GCC's spelling
  std::vector<std::string> defines;       // "NAME[=VALUE]"
};

// nvcc flags: -std= is the standard, -D a define (a later -U of it drops
// it), -Xcompiler=A,B (or --compiler-options) host flags; the rest are
// nvcc's own.
CompileFlags split_nvcc_flags(const std::vector<std::string>& flags, const std::string& origin);
// Host compiler flags: -std= is the standard, -D a define, the rest host flags.
CompileFlags split_cxx_flags(const std::vector<std::string>& flags, const std::string& origin);

struct SkippedFamily {
  std::string name;
  std::string why;  // "no arch >= min_arch 8.9", "the row lists none of 9.0, 9.0a (for its archs 9.0a)"
  bool operator==(const SkippedFamily&) const = default;
};

struct KernelUnit {
  std::string family;
  std::filesystem::path source;      // checkout-relative
  std::vector<Arch> targets;         // the SASS targets it is built for
  std::vector<std::string> gencode;  // "arch=compute_89,code=[sm_89,compute_89]"
  CompileFlags flags;
  // The unit includes torch's C++ API (upstream's kernels include
  // <torch/extension.h>): it compiles against torch's and Python's headers,
  // and its object key names them.  Ours are torch-free.
  bool torch_headers = false;
  // The peak memory of nvcc compiling it for one arch, as its manifest
  // declares (0: undeclared); the planner scales it by the archs nvcc
  // compiles side by side.
  double peak_memory_gib_per_arch = 0;
};

// A host C++ unit of an extension: our binding, or upstream's pybind11 file.
struct BindingUnit {
  std::filesystem::path source;  // checkout-relative
  CompileFlags flags;
  // What of torch the object depends on besides its headers' version: the
  // stable ABI's target version, when the binding uses it.
  std::optional<std::string> stable_abi_target;  // "2.10"
  std::string stable_abi_min_torch;              // "2.10": the first release it serves
};

// One extension module.
struct ExtensionSpec {
  std::string module;  // the import name: "sageattention._C", "sageattention._fused", "fp4attn_cuda"
  std::vector<KernelUnit> kernels;
  std::vector<BindingUnit> bindings;    // none where a .cu holds the module's PYBIND11_MODULE
  std::vector<std::string> torch_libs;  // base names, link order
  std::vector<std::string> libraries;   // linked after torch's: "cuda" (the driver, through CUDA's stub)
  bool cudart_static = false;
  // What the smoke test checks once the module is imported: ops registered
  // under torch.ops.<ops_namespace> (ours), and these attributes (upstream's
  // pybind11 functions).
  std::string ops_namespace;
  std::vector<std::string> exports;
  // The binding's stable-ABI target, when it uses the stable ABI (its
  // extension is then shared by every torch release it serves).
  const std::optional<std::string>& stable_abi_target() const;
};

// What one row's wheel is built from.
struct RowSpec {
  std::string origin;                               // the manifest it was described by (messages)
  std::vector<std::filesystem::path> include_dirs;  // checkout-relative, every unit
  std::vector<toolchain::HeaderPackage> headers;    // provisioned for the row (CUTLASS)
  std::vector<ExtensionSpec> extensions;            // the modules built for this row
  // The families built into this row, in order; an archs family with the
  // exact targets this row builds (what build_info.json records).
  std::vector<KernelFamily> families;
  std::vector<SkippedFamily> skipped_families;  // no row arch they are built for
  std::vector<Arch> ptx_archs;                  // capabilities embedded as PTX (8.9)
  std::filesystem::path package_dir;            // checkout-relative: python/sageattention, sageattention
  std::string package;                          // its import name: "sageattention"
  std::vector<std::string> package_files;       // file-name globs staged; empty: every file
  std::string summary;                          // METADATA Summary
  std::string license_expression;               // "MIT"
  std::filesystem::path license_file;           // checkout-relative
};

// families.json's description of a row's wheel: one `_C` module.  Throws
// UsageError (a binding that is not exactly one file, a malformed Python
// version).
RowSpec extension_from_families(const KernelManifest& manifest, const matrix::Row& row);

// A source manifest's description of a row's wheel: the extensions with a
// target among the row's archs (after the manifest's arch_targets), each a
// pybind11 module on torch's classic API.  Throws UsageError for a stable-ABI
// or abi3 row (an upstream tree's modules are per-interpreter and per-torch).
RowSpec extensions_from_source(const SourceManifest& manifest, const matrix::Row& row);

// nvcc -gencode values for the archs of `row_archs` >= min_arch; the PTX arch
// (when >= min_arch) also gets compute_XX.  Empty when no arch qualifies.
std::vector<std::string> gencode_values(const std::vector<Arch>& row_archs, const std::optional<Arch>& ptx_arch,
                                        const Arch& min_arch);

// The SASS targets a family is compiled for in a row: the row archs >= its
// min_arch, or those of its exact archs whose base arch the row lists.
std::vector<Arch> family_targets(const KernelFamily& family, const std::vector<Arch>& row_archs);

// The family's -gencode values in a row: gencode_values() for a min_arch
// family; for an archs family one "arch=compute_90a,code=sm_90a" per target
// of family_targets(), never PTX.  Empty when the family is not built.
std::vector<std::string> family_gencode(const KernelFamily& family, const std::vector<Arch>& row_archs,
                                        const std::optional<Arch>& ptx_arch);

// Why a family has no target in a row (for the plan and the log).
std::string skip_reason(const KernelFamily& family);

// "0x030A0000" for 3.10.
std::string limited_api_hex(const matrix::PythonVersion& python);

}  // namespace sb::plan
