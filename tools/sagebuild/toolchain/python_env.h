// A Python interpreter on this machine: its headers (for the binding's
// PyInit), its extension suffix, and the torch it has installed, if any.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sagebuild/matrix/version.h"
#include "sagebuild/run/process.h"

namespace sb::toolchain {

using run::Command;
using run::ProcessRunner;
using run::Result;

struct PythonTorch {
  std::string version;  // torch.__version__
  std::string cuda;     // torch.version.cuda, empty for CPU builds
  bool cxx11_abi = true;
  std::filesystem::path dir;  // the torch package directory
  // The release (nullopt for a version that is not one: "2.12.0a0+git...").
  std::optional<matrix::TorchVersion> release() const { return matrix::TorchVersion::parse_installed(version); }
};

struct PythonInfo {
  std::filesystem::path executable;
  int major = 0, minor = 0;
  std::filesystem::path include_dir;  // sysconfig "include"
  bool has_headers = false;           // Python.h is there
  std::string ext_suffix;             // ".cpython-312-x86_64-linux-gnu.so"
  std::optional<PythonTorch> torch;   // when `import torch` works
  std::string version() const { return release().str(); }
  matrix::PythonVersion release() const { return {major, minor}; }
};

// The script run by query_python; prints one JSON object.
std::string_view python_query_script();

// The last line of a query's output, without its line ending: the answer
// (import-time chatter may precede it).
std::string last_line(std::string_view text);

// Parses the script's JSON output; throws UsageError on malformed output.
PythonInfo parse_python_query(std::string_view json, const std::filesystem::path& executable);

// Runs `python -c <script>`; throws UsageError when it cannot.
PythonInfo query_python(ProcessRunner& runner, const std::filesystem::path& python);

// query_python, with the answer cached under <cache_dir>/pythons/ by the path
// `python` names (a venv's link to the system interpreter is a Python of its
// own) and reused while the interpreter and its site-packages directories are
// unchanged.
PythonInfo query_python_cached(ProcessRunner& runner, const std::filesystem::path& python,
                               const std::filesystem::path& cache_dir);

}  // namespace sb::toolchain
