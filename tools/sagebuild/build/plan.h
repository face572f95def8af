// From matrix rows and their toolchains to a compile graph: which objects
// each row needs, which are already in the cache, and the exact command that
// makes each missing one.  Pure: no process is run and nothing is written,
// so it is tested with fake toolchains (plan_test.cc).
//
// Compile once, package many: kernel objects are torch-free and keyed by
// object_key(); rows on the same CUDA share them.  The classic binding (the
// only file that includes torch's C++ API) is keyed by the torch build too,
// so it is compiled once per torch release, and the link is per row.  Rows
// whose torch uses the stable-ABI binding (families.json binding.stable_abi)
// key it without the torch release, by its target version instead, and so is
// the link: <cache>/extensions/<key>/_C.abi3.so serves every such row.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/build/kernel_manifest.h"
#include "sagebuild/build/object_key.h"
#include "sagebuild/matrix/matrix.h"

namespace sb::build {

// What the planner needs to know of a row's toolchain (toolchain.h fills it).
struct RowToolchain {
  std::filesystem::path nvcc;
  std::string nvcc_version;              // "13.0.88", from nvcc --version
  std::filesystem::path cuda_include;    // <cuda>/include
  std::filesystem::path cuda_lib;        // where libcudart.so is
  std::filesystem::path host_cxx;        // g++ / clang++
  std::string host_compiler;             // "gcc 12.2.0"
  std::filesystem::path torch_root;      // torch package dir: the headers and libraries compiled against
  std::string torch_version;             // "2.11.0+cu130", of torch_root (stable-ABI rows: may differ from the row's)
  bool cxx11_abi = true;
  std::filesystem::path python_include;  // headers for the binding
  std::string python_version;            // of those headers ("3.11")
  std::string ext_suffix;                // per-interpreter rows: ".cpython-312-x86_64-linux-gnu.so"
};

struct RowInput {
  sb::matrix::Row row;
  KernelManifest manifest;
  RowToolchain toolchain;
};

struct PlanSettings {
  std::filesystem::path repo_root;
  std::filesystem::path objects_dir;     // <cache>/objects
  std::filesystem::path extensions_dir;  // <cache>/extensions (stable-ABI links); default <objects>/../extensions
  std::filesystem::path work_dir;        // build.ninja and per-row outputs
  std::vector<std::string> launcher;     // {"/usr/bin/ccache"} or empty
  ReadFileFn read = read_disk_file;
  std::function<bool(const std::filesystem::path&)> exists;  // default: std::filesystem::exists
};

// One command producing one output (written to `temp` then renamed, so an
// interrupted build never leaves a truncated object behind).
struct Edge {
  std::filesystem::path output;
  std::filesystem::path temp;
  std::vector<std::filesystem::path> inputs;
  std::vector<std::string> argv;  // writes `temp`
  std::string description;        // "nvcc pv_fp8 kernels/src/pv_fp8.cu [8.9 9.0a]"
};

struct PlannedObject {
  std::string family;             // kernel family, or "binding"
  std::filesystem::path source;
  std::string key;
  std::filesystem::path object;   // <objects>/<key>.o
  bool cached = false;            // already in the cache: no edge
};

struct SkippedFamily {
  std::string name;
  std::string why;  // "no arch >= min_arch 8.9", "the row lists none of 9.0, 9.0a (for its archs 9.0a)"
  bool operator==(const SkippedFamily&) const = default;
};

struct RowGraph {
  std::string row_id;
  std::vector<PlannedObject> kernels;
  PlannedObject binding;
  std::vector<std::string> families;     // the families built into this row
  std::vector<SkippedFamily> skipped_families;  // no row arch they are built for
  std::string extension_name;            // "_C.abi3.so"
  std::filesystem::path extension;       // <work>/rows/<id>/<extension_name>, or the shared stable-ABI one
  std::optional<std::string> stable_abi_target;  // "2.10" when the stable-ABI binding serves this row
  bool extension_cached = false;         // a shared extension already in the cache: no link edge
};

struct CompileGraph {
  std::vector<Edge> edges;   // one per distinct output, kernels first
  std::vector<RowGraph> rows;
  int kernels_cached = 0, kernels_to_compile = 0;    // distinct kernel objects
  int bindings_cached = 0, bindings_to_compile = 0;  // distinct binding objects
  int links = 0, links_cached = 0;                   // distinct extensions to link / already linked
};

// nvcc -gencode flags for the archs of `row_archs` >= min_arch; the PTX arch
// (when >= min_arch) also gets compute_XX.  Empty when no arch qualifies.
std::vector<std::string> gencode_flags(const std::vector<sb::matrix::Arch>& row_archs,
                                       const std::optional<sb::matrix::Arch>& ptx_arch,
                                       const sb::matrix::Arch& min_arch);

// The SASS targets a family is compiled for in a row: the row archs >= its
// min_arch, or those of its exact archs whose base arch the row lists.
std::vector<sb::matrix::Arch> family_targets(const KernelFamily& family,
                                             const std::vector<sb::matrix::Arch>& row_archs);

// The family's -gencode flags in a row: gencode_flags() above for a min_arch
// family; for an archs family one `arch=compute_90a,code=sm_90a` per target
// of family_targets(), never PTX.  Empty when the family is not built.
std::vector<std::string> family_gencode_flags(const KernelFamily& family,
                                              const std::vector<sb::matrix::Arch>& row_archs,
                                              const std::optional<sb::matrix::Arch>& ptx_arch);

// Why a family has no target in a row (for the plan and the log).
std::string skip_reason(const KernelFamily& family);

// "0x030A0000" for "3.10"; throws UsageError on a malformed version.
std::string limited_api_hex(const std::string& python_version);

// "_C.abi3.so" for abi3 rows, "_C" + ext suffix for per-interpreter rows.
std::string extension_file_name(const sb::matrix::Row& row, const std::string& ext_suffix);

CompileGraph plan_compile(const std::vector<RowInput>& rows, const PlanSettings& settings);

}  // namespace sb::build
