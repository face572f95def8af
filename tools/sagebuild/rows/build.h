// `sagebuild build`: the whole data flow for a profile or a row, on any host,
// a stage per file: session.h (the options checked, the rows chosen, the
// checkout recognised; for_python.h: the row of one Python environment) ->
// resolve.h (1. each row's toolchain, found or provisioned) -> planning.h
// (2. the compile graph, plan/; 3a. --dry-run prints it) -> build.cc (3b. the
// row pipeline, pipeline.h: ninja, stage, pack, verify, smoke test, stamp;
// torch_envs.h for --provision-torch; 4. the summary, summary.h).
// `sagebuild doctor` is doctor.h, `doctor --preprocess` preflight.h.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::rows {

struct BuildOptions {
  std::string profile = "default";
  std::vector<std::string> rows;  // --row: build exactly these (a CI job passes one)
  std::filesystem::path out_dir = "dist";
  int jobs = 0;  // 0: the number of CPUs
  // Threads each nvcc may use for its unit (--threads / --split-compile):
  // 0 means --jobs, shared among the units compiled at once
  // (nvcc_threads_shared), 1 nvcc's single-threaded default.
  int nvcc_threads = 0;
  bool nvcc_threads_shared = false;  // set where nvcc_threads was 0
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
  // --kernel-objects DIR: with --kernels-only, compile each row's torch-free
  // kernel objects alone (no torch needed, no binding, no link, no wheel)
  // and put them into DIR with kernel-objects.json (plan/kernel_objects.h);
  // without it, take every kernel object from DIR, refusing one whose key
  // does not match, and compile only the binding and link.
  std::filesystem::path kernel_objects;
  bool kernels_only = false;
  toolchain::ToolchainOptions toolchain;  // cache_dir and path_env are filled in by run_build
};

// Runs the build; prints progress and the summary to `out`, returns the exit
// code (0 all rows ok, 1 some row failed).  Throws UsageError / ConfigError /
// IoError for problems that concern the whole invocation.
int run_build(BuildOptions options, run::ProcessRunner& runner, std::ostream& out);

}  // namespace sb::rows
