// One invocation of `sagebuild build` or `doctor`: the options checked, the
// rows chosen (a profile, --row, or --for-python's row; --archs checked
// against each), the checkout recognised (this repository's tree or an
// upstream kind a source manifest describes), where it works, and each
// row's result so far.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/plan/kernel_manifest.h"
#include "sagebuild/plan/source_manifest.h"
#include "sagebuild/rows/build.h"
#include "sagebuild/rows/summary.h"
#include "sagebuild/run/process.h"

namespace sb::rows {

// Whether `dir` is this repository's tree (matrix/build-matrix.yaml, kernels/).
bool is_our_tree(const std::filesystem::path& dir);
// The source tree: `start` or its nearest parent holding matrix/ and kernels/.
std::filesystem::path find_source_dir(const std::filesystem::path& start);

// One invocation: its options, its rows, where it works, and each row's
// result so far (a row that failed keeps its first failure).
struct Session {
  BuildOptions o;
  std::vector<matrix::Row> rows;
  std::string name;               // profile or row id, for the work dir and the summary
  std::filesystem::path source;   // the checkout built (--source-dir): ours, or an upstream tree
  std::filesystem::path sources;  // the source manifests: matrix/sources/ beside the matrix
  std::filesystem::path work;
  std::vector<RowResult> results;
  std::map<std::string, plan::KernelManifest> manifests;
  // The upstream kinds the checkout is (every manifest whose markers it
  // has, or the one --source-kind names), read once; empty for our tree.
  std::map<std::string, plan::SourceManifest> tree_kinds;
  std::string tree_description;  // "this repository's tree", "an upstream-sageattention tree", for messages

  void fail(std::size_t i, const std::string& stage, const std::string& why) {
    results[i].ok = false;
    results[i].stage = stage;
    results[i].error = why;
  }
  bool stopped() const {
    return !o.keep_going &&
           std::any_of(results.begin(), results.end(), [](const RowResult& r) { return !r.ok && !r.stage.empty(); });
  }
};

// The options checked and completed (--jobs, the cache, CUDA_HOME), the rows
// chosen and the checkout recognised; throws UsageError for what is wrong.
Session open_session(BuildOptions o, run::ProcessRunner& runner, std::ostream& out);

// build_info.json names, per family, what verify looks for in the kernels'
// SASS: refuse before compiling rather than after.
const plan::KernelManifest& manifest_of(Session& s, const matrix::Row& row);

}  // namespace sb::rows
