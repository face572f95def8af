// A plan, written out: a table for people, JSON for tools, and the
// `strategy.matrix` JSON a GitHub Actions workflow fans out over.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "sagebuild/matrix/matrix.h"

namespace sb::matrix {

// Every field of the row, as JSON.
nlohmann::json row_json(const Row& row);

// Aligned columns (id, python(s), torch, cuda, platform, archs, where torch
// comes from, wheel) and a
// one-line summary; ends with a newline.
std::string format_table(const Plan& plan);

// {"profile": ..., "rows": [row_json...]}, indented; ends with a newline.
std::string format_json(const Plan& plan);

// Whether `sagebuild build` provisions CUDA `cuda` ("13.0") from PyPI by itself
// on a `platform` ("linux_x86_64") host.
// The rule belongs to the toolchain (toolchain/cuda.h: cuda_provisioned_from_pypi),
// which depends on this unit; the CLI hands it in.
using CudaFromPypi = std::function<bool(const std::string& cuda, const std::string& platform)>;

// {"include":[{"id","os","command","package","torch","cuda","cuda_provision","torch_index","python","wheel"}, ...]}
// on one line and without a trailing newline, so that
// `echo "matrix=$(sagebuild matrix --format github)" >> $GITHUB_OUTPUT` works.
// cuda_provision: "pypi" where the command provisions the row's CUDA itself,
// "install" where the job must install that toolkit and add --cuda-home
// (every Windows row: the Windows build finds a toolkit, never provisions one).
// torch_index: null where the row's torch comes from PyPI, else the URL of
// PyTorch's index for the row's CUDA. wheel: the file name the row makes.
std::string format_github(const Plan& plan, const CudaFromPypi& cuda_from_pypi);

}  // namespace sb::matrix
