// From rows, their extensions (extension.h) and their toolchains to one
// compile graph: which objects each row needs, which are already in the
// cache, and the exact command that makes each missing one, for the GNU and
// the MSVC toolchain alike (host_toolchain.h writes the command lines).  Pure:
// no process is run and nothing is written, so it is tested with fake
// toolchains and an in-memory repository (plan_test.cc).
//
// Compile once, package many: kernel objects are torch-free and keyed by
// object_key(); rows on the same CUDA share them.  (An upstream tree's
// kernels include torch's headers: their keys name the torch build and the
// Python headers too, so rows share them only where those are the same.)  The classic binding (the
// only file that includes torch's C++ API) is keyed by the torch build too,
// so it is compiled once per torch release, and the link is per row.  Rows
// whose binding uses the stable ABI key it without the torch release, by its
// target version instead, and so is the link: <cache>/extensions/<key>/
// _C.abi3.so serves every such row.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/common/graph.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/plan/extension.h"
#include "sagebuild/plan/kernel_objects.h"
#include "sagebuild/plan/object_key.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::plan {

// Where a row's commands run: the directories as the commands name them and
// the compiler launcher.  The host's own for the rows it builds; for a dry
// run of another platform's row, labelled placeholders ("<SOURCE_DIR>") and
// no launcher.
struct BuildSite {
  std::filesystem::path source;       // the checkout
  std::filesystem::path objects;      // <cache>/objects
  std::filesystem::path extensions;   // <cache>/extensions (stable-ABI links)
  std::filesystem::path work;         // build.ninja and rows/<id>/
  std::vector<std::string> launcher;  // {"/usr/bin/ccache"} or empty
};

struct RowInput {
  matrix::Row row;
  RowSpec spec;
  toolchain::RowToolchain toolchain;
  BuildSite site;
};

// How many parts a one-arch kernel unit's device compilation is split into
// (nvcc --split-compile) when nvcc may use several threads: the longest unit
// of a cold build (a Hopper kernel file) otherwise keeps one core busy while
// the others idle.  8: measured on a 16-core host, BENCHMARKS.md.
inline constexpr int kSplitCompile = 8;

struct PlanSettings {
  std::filesystem::path repo_root;  // the checkout read here, for the object keys
  ReadFileFn read = read_disk_file;
  std::function<bool(const std::filesystem::path&)> exists;  // default: std::filesystem::exists
  // Threads each kernel unit's nvcc may use (--nvcc-threads, by default
  // --jobs): a unit's archs compile side by side, and a one-arch unit is
  // split (kSplitCompile); 1 compiles each unit on one thread.
  int nvcc_threads = 1;
  // nvcc_threads left to its default (--jobs): the threads are shared among
  // the kernel units this build compiles, nvcc_threads / min(nvcc_threads,
  // units) each, at least 1, so that ninja's jobs and nvcc's threads together
  // do not ask more of the cores than there are (on 2 cores, 2 threads for
  // each of 2 units cost 28 % more CPU and 52 % more wall time than one
  // each, BENCHMARKS.md).  The count is not in any key; the split still
  // follows nvcc_threads > 1 (its own key, the same on every machine).
  bool share_threads = false;
  // Each unit's preprocessor command instead of its compile (`sagebuild
  // doctor --preprocess`): every unit gets an edge, cached or not, writing
  // <work>/preprocess/<key>.ii; no link.
  bool preprocess = false;
  // --kernels-only: each row's kernel objects alone (no binding, no link);
  // a unit that includes torch's headers is refused (UsageError): its object
  // is not torch-free.
  bool kernels_only = false;
  // --kernel-objects DIR (not --kernels-only): every kernel object is taken
  // from DIR (kernel_objects.h), none compiled; a unit whose key DIR does not
  // list, or whose file there is not the listed one, is refused
  // (HandedObjectError) before anything runs.
  const KernelObjects* handed = nullptr;
  std::filesystem::path handed_dir;
};

struct PlannedObject {
  std::string family;            // kernel family, or "binding"
  std::filesystem::path source;  // as the command names it
  std::string key;
  std::filesystem::path object;  // <objects>/<key>.o (.obj)
  bool cached = false;           // already in the cache: no edge
};

// One extension module of a row: its objects and where it is linked.
struct PlannedExtension {
  std::string module;  // "sageattention._C", "fp4attn_cuda"
  std::vector<PlannedObject> kernels;
  std::vector<PlannedObject> bindings;
  std::string filename;                          // "_C.abi3.so", "_fused.cpython-312-x86_64-linux-gnu.so"
  std::filesystem::path path;                    // <work>/rows/<id>/<filename>, or the shared stable-ABI one
  std::optional<std::string> stable_abi_target;  // "2.10" when the stable-ABI binding serves this row
  bool cached = false;                           // a shared extension already in the cache: no link edge
};

struct RowGraph {
  std::string row_id;
  std::vector<PlannedExtension> extensions;     // in the spec's order
  std::vector<std::string> families;            // the families built into this row
  std::vector<SkippedFamily> skipped_families;  // no row arch they are built for
};

struct CompileGraph {
  std::vector<graph::Edge> edges;  // one per distinct output: kernels, bindings, links
  std::vector<RowGraph> rows;
  int kernels_cached = 0, kernels_to_compile = 0;    // distinct kernel objects
  int bindings_cached = 0, bindings_to_compile = 0;  // distinct binding objects
  int links = 0, links_cached = 0;                   // distinct extensions to link / already linked
};

// Throws UsageError for what a toolchain cannot express (a host flag cl.exe
// has no translation for, a malformed Python version).
CompileGraph plan_compile(const std::vector<RowInput>& rows, const PlanSettings& settings);

}  // namespace sb::plan
