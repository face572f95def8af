// What one row's extension module is made of, whatever described it: the
// CUDA units of each kernel family with their targets, the binding unit and
// what of torch it depends on, and what the link takes.  The planner
// (plan.h) turns it into commands through the row's host toolchain, so a new
// kind of source description (families.json today) only has to produce an
// ExtensionSpec.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/plan/kernel_manifest.h"
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

// nvcc flags: -std= is the standard, -D a define, -Xcompiler=A,B (or
// --compiler-options) host flags; the rest are nvcc's own.
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
  std::filesystem::path source;       // repository-relative
  std::vector<matrix::Arch> targets;  // the SASS targets it is built for
  std::vector<std::string> gencode;   // "arch=compute_89,code=[sm_89,compute_89]"
  CompileFlags flags;
};

struct BindingUnit {
  std::filesystem::path source;  // repository-relative
  CompileFlags flags;
  // What of torch the object depends on besides its headers' version: the
  // stable ABI's target version, when the binding uses it.
  std::optional<std::string> stable_abi_target;  // "2.10"
  std::string stable_abi_min_torch;              // "2.10": the first release it serves
};

struct ExtensionSpec {
  std::string origin;                               // where it was described (messages)
  std::vector<std::filesystem::path> include_dirs;  // repository-relative
  std::vector<KernelUnit> kernels;
  // The families built into this row, in order; an archs family with the
  // exact targets this row builds (what build_info.json records).
  std::vector<KernelFamily> families;
  std::vector<SkippedFamily> skipped_families;  // no row arch they are built for
  BindingUnit binding;
  std::vector<std::string> torch_libs;  // base names, link order
  bool cudart_static = false;
};

// families.json's description of a row's extension.  Throws UsageError (a
// binding that is not exactly one file, a malformed Python version).
ExtensionSpec extension_from_families(const KernelManifest& manifest, const matrix::Row& row);

// nvcc -gencode values for the archs of `row_archs` >= min_arch; the PTX arch
// (when >= min_arch) also gets compute_XX.  Empty when no arch qualifies.
std::vector<std::string> gencode_values(const std::vector<matrix::Arch>& row_archs,
                                        const std::optional<matrix::Arch>& ptx_arch, const matrix::Arch& min_arch);

// The SASS targets a family is compiled for in a row: the row archs >= its
// min_arch, or those of its exact archs whose base arch the row lists.
std::vector<matrix::Arch> family_targets(const KernelFamily& family, const std::vector<matrix::Arch>& row_archs);

// The family's -gencode values in a row: gencode_values() for a min_arch
// family; for an archs family one "arch=compute_90a,code=sm_90a" per target
// of family_targets(), never PTX.  Empty when the family is not built.
std::vector<std::string> family_gencode(const KernelFamily& family, const std::vector<matrix::Arch>& row_archs,
                                        const std::optional<matrix::Arch>& ptx_arch);

// Why a family has no target in a row (for the plan and the log).
std::string skip_reason(const KernelFamily& family);

// "0x030A0000" for "3.10"; throws UsageError on a malformed version.
std::string limited_api_hex(const std::string& python_version);

}  // namespace sb::plan
