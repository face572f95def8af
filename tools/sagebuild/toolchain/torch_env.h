// `sagebuild build --provision-torch`: the row's torch installed, with its
// dependencies, into a private virtual environment in sagebuild's cache: the
// Python the smoke test imports the wheel with, the same on Linux and Windows
// (the user's Python is left alone).  Made once per torch build and Python,
// reused while its completion marker is there.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/toolchain/python_env.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::toolchain {

// <cache>/torch-env/<torch>-<cuda tag>-py<X.Y>: one per torch build and
// interpreter version.
std::filesystem::path torch_env_entry(const std::filesystem::path& cache_dir, const matrix::Row& row,
                                      const PythonInfo& base);

// The environment's interpreter (bin/python; Scripts\python.exe on Windows).
std::filesystem::path torch_env_python(const std::filesystem::path& entry);

// The interpreter a row's environment is made from: --python, else the
// row's own Python for a per-interpreter row (python3.12), else python3
// (python on Windows).  Throws UsageError naming what to install.
std::filesystem::path torch_env_base(const ToolchainOptions& opt, const matrix::Row& row);

// The entry, complete: when its marker (.complete, written atomically last)
// names this torch it is reused as it is; else it is made again under a lock
// (`base -m venv`, then its pip installs torch==<row.torch> with its
// dependencies from torch_index_for(); a local wheel `wheel` of that release,
// when given, instead of downloading torch itself).  Returns the
// interpreter.  Throws UsageError with pip's last words and the fix.
std::filesystem::path provision_torch_env(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& base,
                                          const matrix::Row& row,
                                          const std::optional<std::filesystem::path>& wheel = std::nullopt);

// The downloaded torch wheel of the row in the cache (provision_torch's) for
// `base`'s interpreter, if any.
std::optional<std::filesystem::path> cached_torch_wheel(const std::filesystem::path& cache_dir, const matrix::Row& row,
                                                        const PythonInfo& base);

}  // namespace sb::toolchain
