// --for-python: the row of this repository's package that fits one Python
// environment (its torch release and torch's CUDA, its Python), and the archs
// to build for it (TORCH_CUDA_ARCH_LIST, else the GPUs here); what
// `pip install .` builds (tools/sagebuild/pep517/).
#pragma once

#include <string>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/python_env.h"

namespace sb::rows {

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

// The compute capabilities nvidia-smi reports ("9.0"), or none.
std::vector<std::string> gpu_compute_caps(run::ProcessRunner& runner, const std::string& path_env);

}  // namespace sb::rows
