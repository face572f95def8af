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

// The table's columns as a Markdown table, headed by the summary line (a
// GitHub job summary); `|` in a cell is escaped.  Ends with a newline.
std::string format_markdown(const Plan& plan);

// {"profile": ..., "rows": [row_json...]}, indented; ends with a newline.
std::string format_json(const Plan& plan);

// Whether `sagebuild build` provisions CUDA `cuda` ("13.0") from PyPI by itself
// on a `platform` ("linux_x86_64") host.
// The rule belongs to the toolchain (toolchain/cuda.h: cuda_provisioned_from_pypi),
// which depends on this unit; the CLI hands it in.
using CudaFromPypi = std::function<bool(const CudaVersion& cuda, const std::string& platform)>;

// {"include":[{"id","os","command","package","torch","cuda","cuda_provision","torch_index","python","wheel",
//              "artifact","upstream_repository","upstream_commit","kernel_group"}, ...]}
// on one line and without a trailing newline, so that
// `echo "matrix=$(sagebuild matrix --format github)" >> $GITHUB_OUTPUT` works.
// cuda_provision: "pypi" where the command provisions the row's CUDA itself
// (CUDA 13, Linux and Windows), "install" where the job must install that
// toolkit and add --cuda-home (CUDA 12: PyPI has no nvcc for it).
// torch_index: null where the row's torch comes from PyPI, else the URL of
// PyTorch's index for the row's CUDA. wheel: the file name the row makes.
// artifact: the name its wheel is uploaded as (artifact_name).
// upstream_repository, upstream_commit: for a row built from upstream's
// tree, the checkout the job passes as --source-dir; null for ours.
// kernel_group: kernel_group(row).
std::string format_github(const Plan& plan, const CudaFromPypi& cuda_from_pypi);

// The workflow artifact a row's wheel is uploaded as: "wheel-<id>" for our
// tree's rows; for a row built from upstream's tree its id, which starts with
// its package ("sageattn3-1.0.0-torch2.9.0-cu128-cp312-linux_x86_64"), so
// those artifacts sort apart and can be fetched by that prefix.
std::string artifact_name(const Row& row);

// The rows that can share one set of kernel objects (`--kernels-only`,
// `--kernel-objects`): our tree's rows of one platform, CUDA release and arch
// set, named "kernels-<platform>-<cuda tag>-<archs joined by _>"
// ("kernels-linux_x86_64-cu130-8.0_9.0a"), usable as an artifact name.  Empty
// for a row built from an upstream tree (its kernels include torch's headers).
// The runner and how CUDA is provisioned follow from the platform and CUDA
// release; .github/scripts/plan.sh checks that a group's rows agree on them.
std::string kernel_group(const Row& row);

// The name Docker Bake calls a Linux row by, as the fork's seeds name them:
// "linux-pytorch28-cu129-python312", "linux-pytorch211-cu130-abi3" for an
// abi3 row; a package other than our own tree's is prefixed
// ("sageattn3-linux-pytorch29-cu128-python312").
std::string bake_target_name(const Row& row);

// A docker-bake.hcl for the plan's Linux rows (Windows stays native): one
// target per row, building it with `sagebuild --row ID` in the repository's
// docker/Dockerfile (manylinux_2_28) and exporting the wheel to dist/;
// groups "default" and "linux" (every target) and one per torch release
// ("pytorch211").  Ends with a newline.
std::string format_bake(const Plan& plan, const CudaFromPypi& cuda_from_pypi);

}  // namespace sb::matrix
