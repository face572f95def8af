// The last check of a built wheel: install it into a fresh virtual
// environment and, where the row's torch is importable here, import the
// package and each extension module and check that its ops are registered
// with torch and its functions are there.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/python_env.h"

namespace sb::rows {

struct SmokeResult {
  bool ok = false;
  bool imported = false;  // the extension was loaded by torch
  std::string message;    // "ops registered: 5" / "import skipped: torch 2.11.0 not importable here" / the failure
};

// An extension module the smoke check imports, and what it checks there.
struct SmokeModule {
  std::string module;                // "sageattention._C", "fp4attn_cuda"
  std::string archive_name;          // where the wheel installs it: "sageattention/_C.abi3.so"
  std::string ops_namespace;         // ops registered under torch.ops.<it> (ours); empty: none
  std::vector<std::string> exports;  // attributes the module has (upstream's pybind11 functions)
  bool needs_driver = false;         // links libcuda.so.1 (upstream's -lcuda)
};

struct SmokeRequest {
  std::filesystem::path wheel;
  std::string package;  // "sageattention": imported first
  std::vector<SmokeModule> modules;
  std::string torch_version;      // the row's torch
  toolchain::PythonInfo python;   // makes the venv
  bool torch_importable = false;  // `python` imports the row's torch
  std::filesystem::path scratch;  // an empty directory for the venv
  // CUDA's link stubs (libcuda.so, soname libcuda.so.1).  A module that
  // links the driver cannot be imported where there is none (a CPU
  // machine): there the import runs with the stub as libcuda.so.1, which
  // loads and fails every call, so what is checked is that the module
  // loads, resolves its symbols and registers its functions.
  std::filesystem::path cuda_stubs;
};

// Installs the wheel into a fresh venv and imports it (SmokeResult says how far it got).
SmokeResult run_smoke(run::ProcessRunner& runner, const SmokeRequest& req);

}  // namespace sb::rows
