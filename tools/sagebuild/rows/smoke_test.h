// The last check of a built wheel: install it into a fresh virtual
// environment and, where the row's torch is importable here, import it and
// check that its ops are registered with torch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/python_env.h"

namespace sb::rows {

struct SmokeResult {
  bool ok = false;
  bool imported = false;  // the extension was loaded by torch
  std::string message;    // "ops registered: 5" / "import skipped: torch 2.11.0 not importable here" / the failure
};

struct SmokeRequest {
  std::filesystem::path wheel;
  std::string package;            // "sageattention" (module and ops namespace)
  std::string extension_name;     // "_C.abi3.so"
  std::string torch_version;      // the row's torch
  toolchain::PythonInfo python;   // makes the venv
  bool torch_importable = false;  // `python` imports the row's torch
  std::filesystem::path scratch;  // an empty directory for the venv
};

SmokeResult smoke_test(run::ProcessRunner& runner, const SmokeRequest& req);

}  // namespace sb::rows
