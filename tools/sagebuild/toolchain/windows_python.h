// The build Python of a win_amd64 row and the torch installed in it, as the
// Windows plan needs them: torch's headers and .lib import libraries, and
// Python's headers and python3.lib / python3X.lib.  The interpreter answers
// one query script (run through the ProcessRunner, torch located with
// importlib, not imported: importing loads CUDA DLLs and takes seconds);
// parsing and checking the answer are pure, tested on Linux against answers
// written in the script's format.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/run/process.h"

namespace sb::toolchain {

using run::Command;
using run::ProcessRunner;
using run::Result;

struct WindowsTorchFacts {
  std::string root;                       // <site-packages>\torch
  std::string version;                    // __version__ of torch\version.py ("2.7.1+cu128")
  std::string cuda;                       // cuda of torch\version.py ("12.8"); empty: a CPU build
  std::vector<std::string> include_dirs;  // torch\include, torch\include\torch\csrc\api\include (those present)
  std::string lib_dir;                    // torch\lib
  std::vector<std::string> libs;          // the .lib files in lib_dir ("c10.lib", "torch_cpu.lib", ...)
  // The release (nullopt for a version that is not one).
  std::optional<matrix::TorchVersion> release() const { return matrix::TorchVersion::parse_installed(version); }
};

struct WindowsPythonFacts {
  std::string executable;  // sys.executable
  int major = 0, minor = 0;
  std::string include_dir;  // sysconfig's "include" (<base prefix>\Include)
  bool has_python_h = false;
  std::string libs_dir;           // <sys.base_prefix>\libs
  std::vector<std::string> libs;  // the .lib files there ("python3.lib", "python312.lib")
  std::optional<WindowsTorchFacts> torch;
  std::string version() const { return release().str(); }
  matrix::PythonVersion release() const { return {major, minor}; }
};

// The script `python -c` runs; prints one JSON object on its last line.
std::string_view windows_python_query_script();

// Parses the script's output (the last line); throws UsageError naming
// `python` when it is not the expected JSON.
WindowsPythonFacts parse_windows_python_query(std::string_view output, const std::string& python);

// Runs `<python> -c <script>`; throws UsageError when it cannot.
WindowsPythonFacts query_windows_python(ProcessRunner& runner, const std::string& python);

// Everything the row's Windows build needs from that Python, checked at once:
// Python.h, python3.lib (abi3) or python3X.lib (per-interpreter, X from the
// row's build Python, which must be this interpreter's version), torch present
// and of the row's release and CUDA, its headers, and `torch_libs` (base
// names, "c10" -> c10.lib) in torch\lib.  Throws UsageError listing every
// problem with the fix.
void check_windows_python(const WindowsPythonFacts& facts, const sb::matrix::Row& row,
                          const std::vector<std::string>& torch_libs);

}  // namespace sb::toolchain
