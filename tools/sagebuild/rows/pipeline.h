// The row pipeline, the same for every host toolchain: the compile graph
// written as build.ninja and run by ninja, then per row: stage (the Python
// package, the extension, build_info.json), pack, verify, smoke test where
// the row's torch can run here, move the wheel into --out, stamp.  A row
// whose inputs and wheel are unchanged since its last stamp is up to date and
// costs nothing; a row that fails leaves no wheel behind, and, with
// keep_going, does not stop the others.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/summary.h"
#include "sagebuild/run/process.h"

namespace sb::rows {

struct PipelineSettings {
  std::filesystem::path source_dir;  // the checkout built: its Python package, its LICENSE
  std::filesystem::path work_dir;    // build.ninja and rows/<id>/
  std::filesystem::path out_dir;     // finished wheels
  int jobs = 1;
  bool keep_going = false;
  bool smoke = true;
  std::string source_revision = "unknown";
  std::string ninja = "ninja";  // the program, looked up on the build runner's PATH
  // When set: the Python the smoke test of a row (by id) makes its venv from
  // and imports the row's torch with, asked for after the compile
  // (--provision-torch's environment, installed while ninja compiles);
  // nullopt: the toolchain's own.  Throws UsageError: the row fails.
  std::function<std::optional<toolchain::PythonInfo>(const std::string& row_id)> smoke_python{};
};

// `s` with every character but [A-Za-z0-9._+-] as '_': a directory name.
std::string safe_dir_name(std::string s);

// build.ninja for the graph, and ninja run for the rows whose result is not
// a failure yet, each row's target its extensions (a row planned
// kernels-only: its kernel objects); a row whose target ninja did not finish
// fails at "compile".  Throws UsageError when ninja cannot be started.
void compile_rows(const plan::CompileGraph& graph, const std::vector<RowResult*>& results,
                  const PipelineSettings& settings, run::ProcessRunner& build_runner, std::ostream& out);

// Builds graph.rows[k] for inputs[k] and records the outcome in *results[k]
// (rows whose result is already a failure are left as they are).
// `build_runner` runs ninja (on Windows: in vcvars64's environment), `runner`
// the smoke test.  Throws UsageError when ninja cannot be started at all.
void run_rows(const plan::CompileGraph& graph, const std::vector<plan::RowInput>& inputs,
              const std::vector<RowResult*>& results, const PipelineSettings& settings,
              run::ProcessRunner& build_runner, run::ProcessRunner& runner, std::ostream& out);

}  // namespace sb::rows
