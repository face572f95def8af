// Finding matrix/build-matrix.yaml when --matrix is not given.
#pragma once

#include <filesystem>
#include <optional>

namespace sb::matrix {

inline constexpr const char* kDefaultMatrixPath = "matrix/build-matrix.yaml";

// `start`/matrix/build-matrix.yaml, else the same in the nearest parent that
// has one (so the command works from any directory of a checkout).
std::optional<std::filesystem::path> find_matrix_file(const std::filesystem::path& start);

}  // namespace sb::matrix
