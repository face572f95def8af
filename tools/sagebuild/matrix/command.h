// `sagebuild matrix [--profile P] [--matrix FILE] [--format table|json|github|markdown|bake]`
// `sagebuild matrix --list-profiles`: the profile names, one a line, in file order
#pragma once

#include <filesystem>
#include <string>

#include "sagebuild/common/cli.h"
#include "sagebuild/matrix/format.h"

namespace sb::matrix {

struct MatrixOptions {
  std::string profile = "default";
  std::string matrix_file;  // empty: find matrix/build-matrix.yaml from the cwd up
  std::string format = "table";
  bool list_profiles = false;   // --list-profiles
  CudaFromPypi cuda_from_pypi;  // for --format github (see format.h)
};

void add_matrix_command(CLI::App& app, sb::cli::Context& ctx, CudaFromPypi cuda_from_pypi);

// Loads, expands and formats; throws ConfigError / UsageError / IoError.
// `cwd` is where the search for the matrix file starts.
std::string run_matrix(const MatrixOptions& options, const std::filesystem::path& cwd);

}  // namespace sb::matrix
