// `sagebuild build`: the whole data flow for a profile or a row, on any host:
// matrix rows -> toolchain per row (toolchain/) -> compile graph (plan/) ->
// printed (--dry-run) or run by the row pipeline (pipeline.h: ninja, stage,
// pack, verify, smoke test, stamp) -> summary.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::rows {

struct BuildOptions {
  std::string profile = "default";
  std::vector<std::string> rows;  // --row: build exactly these (a CI job passes one)
  std::filesystem::path out_dir = "dist";
  int jobs = 0;  // 0: the number of CPUs
  // Threads each nvcc may use for its unit (--threads / --split-compile):
  // 0 means --jobs, 1 nvcc's single-threaded default.
  int nvcc_threads = 0;
  bool keep_going = false;
  bool dry_run = false;
  bool smoke = true;                  // --no-smoke-test turns it off
  std::filesystem::path cache_dir;    // empty: default_cache_dir()
  std::filesystem::path build_dir;    // empty: <cache>/work/<profile or row>
  std::filesystem::path matrix_path;  // empty: <source>/matrix/build-matrix.yaml
  // The checkout to build: this repository's tree (empty: found upward from
  // the current directory) or an upstream tree that a source manifest
  // (matrix/sources/<kind>.yaml) describes; the matrix then comes from this
  // repository, found upward from the current directory, or --matrix.
  std::filesystem::path source_dir;
  std::string source_kind;        // --source-kind: the manifest to use, instead of recognising the tree
  std::string launcher = "auto";  // ccache | sccache | none | auto
  std::filesystem::path json_path;
  std::vector<std::string> archs;  // --archs: override every row's arch list (development)
  // --for-python: build the one row of this repository's package that fits
  // that interpreter's environment (its Python, its torch and torch's CUDA,
  // this host's platform), with archs from TORCH_CUDA_ARCH_LIST, else the
  // GPU nvidia-smi reports, else the package's; what `pip install .` runs
  // (tools/sagebuild/pep517/).  The interpreter is also --python.
  std::filesystem::path for_python;
  // doctor --preprocess: provision the rows' toolchains and run every
  // compile unit of their graph through the preprocessor (run_preflight).
  bool preprocess = false;
  // --provision-torch: the row's torch with its dependencies in a private
  // venv in the cache (toolchain/torch_env.h), installed in the background
  // while ninja compiles; the smoke test's Python.
  bool provision_torch = false;
  toolchain::ToolchainOptions toolchain;  // cache_dir and path_env are filled in by run_build
};

// Whether `dir` is this repository's tree (matrix/build-matrix.yaml, kernels/).
bool is_our_tree(const std::filesystem::path& dir);
// The source tree: `start` or its nearest parent holding matrix/ and kernels/.
std::filesystem::path find_source_dir(const std::filesystem::path& start);

// The row of `m` for the environment of `python` (query_python's answer) on
// `platform`: this repository's package, the torch release and CUDA of that
// torch, a row serving that Python.  Throws UsageError naming what to install
// when the environment has no torch, a CPU-only torch, or a combination the
// matrix does not build.
matrix::Row row_for_environment(const matrix::Matrix& m, const toolchain::PythonInfo& python,
                                const std::string& platform);

// The archs of a --for-python build: TORCH_CUDA_ARCH_LIST's value when set
// ("8.0;8.6+PTX", "8.0 9.0"; +PTX is dropped: every row embeds PTX of its
// newest arch), else `gpu_caps` (nvidia-smi's compute capabilities), else
// empty (the row's own).  `origin` says which.  Throws UsageError for an
// entry that is no arch (torch's names such as "Ampere" included).
std::vector<std::string> environment_archs(const char* torch_cuda_arch_list, const std::vector<std::string>& gpu_caps,
                                           std::string& origin);

// The launcher argv prefix for --launcher; throws UsageError for an unknown
// name or a launcher asked for by name that is not installed.
std::vector<std::string> resolve_launcher(const std::string& launcher, const std::string& path_env);

// Runs the build; prints progress and the summary to `out`, returns the exit
// code (0 all rows ok, 1 some row failed).  Throws UsageError / ConfigError /
// IoError for problems that concern the whole invocation.
int run_build(BuildOptions options, run::ProcessRunner& runner, std::ostream& out);

// `sagebuild doctor`: one line per check for each row: ✓ present, ↓ a build
// downloads it, ✗ missing (with its fix); returns 1 when it printed any ✗
// line, else 0.
int run_doctor(BuildOptions options, run::ProcessRunner& runner, std::ostream& out);

// A missing header in a compiler's output: GCC/clang's "x.cu:3:10: fatal
// error: cublas_v2.h: No such file or directory" or cl.exe's "fatal error
// C1083: Cannot open include file: 'cublas_v2.h'".
struct MissingHeader {
  std::string header;         // "cublas_v2.h", as the #include names it
  std::string included_from;  // "/x/torch/include/ATen/cuda/CUDAContextLight.h:8" (empty for cl.exe)
};
std::optional<MissingHeader> find_missing_header(const std::string& compiler_output);

// `sagebuild doctor --preprocess`: each row's toolchain resolved or
// provisioned as a build would (torch, CUDA, the source's header packages,
// a host compiler the CUDA accepts), then every compile unit of the row's
// compile graph (plan_compile: the build's own command lines, with -E for
// -c) through the preprocessor.  Prints a line per unit and a summary per
// row; a missing header is named with the unit and what provides it.
// Returns 0 when every row passes, else 1.
int run_preflight(BuildOptions options, run::ProcessRunner& runner, std::ostream& out);

}  // namespace sb::rows
