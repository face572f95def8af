// Building win_amd64 rows once their facts are known (windows_plan.h's
// discovery): the Windows plan written as build.ninja, ninja run through the
// ProcessRunner (in vcvars64's environment on a real host), then per row
// _C.pyd staged with the Python package and build_info.json, packed into a
// win_amd64 wheel, verified (PE/COFF) and moved into --out.
//
// Nothing here calls Windows: paths are the host's std::filesystem paths,
// turned into the plan's Windows path strings and back by
// windows_path_string() / native_path(), which are the identity on Windows.
// So the whole sequence is tested on Linux with a fake runner standing in for
// ninja; on Windows only builder.cc's glue (WindowsProcessRunner, vswhere,
// vcvars) is added.  It has never run on Windows.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "sagebuild/build/process.h"
#include "sagebuild/build/summary.h"
#include "sagebuild/build/windows_plan.h"

namespace sb::build {

struct WindowsBuildSettings {
  std::filesystem::path source_dir;  // the checkout: kernels/, python/, LICENSE
  std::filesystem::path cache_dir;   // objects go to <cache>/objects
  std::filesystem::path work_dir;    // build.ninja and rows/<id>/
  std::filesystem::path out_dir;     // finished wheels
  int jobs = 1;
  bool keep_going = false;
  bool allow_unsupported_compiler = false;
  std::string source_revision = "unknown";
  std::string ninja = "ninja";       // the program, looked up on the runner's PATH
};

// A host path as the Windows plan writes it: its string on Windows; on other
// hosts (tests) the same text with '/' as '\', which native_path() undoes.
std::string windows_path_string(const std::filesystem::path& p);
std::filesystem::path native_path(const std::string& windows_path);

// Plans, compiles (ninja), packs and verifies the rows; one RowResult each,
// in order.  The smoke test is not run (it is not implemented for Windows):
// RowResult::smoke says so.  Throws UsageError when ninja cannot be started
// at all; a row that fails leaves no wheel behind.
std::vector<RowResult> build_windows_rows(const std::vector<WindowsRowInput>& rows, const WindowsBuildSettings& settings,
                                          ProcessRunner& runner, std::ostream& out);

}  // namespace sb::build
