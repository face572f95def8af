// Every valid row of the matrix: each package crossed with the torch
// releases, CUDA variants, platforms and Pythons it allows, less exclusions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sagebuild/matrix/matrix.h"

namespace sb::matrix {

// The most rows a matrix may expand to, counted before exclusions (a CI
// matrix job runs at most 256; this one has 260 in all): a larger product is a
// ConfigError at the package that reaches it, before any row is made.
constexpr std::uint64_t kMaxRows = 10'000;

// In plan order (package, torch, CUDA, Python, platform). Throws ConfigError,
// at the package's arch, when a CUDA the package would be built with cannot
// compile one of its required archs, and at the package when the rows would
// be more than kMaxRows.
std::vector<Row> compute_rows(const Matrix& m);

bool excludes(const Exclusion& e, std::string_view package, const TorchVersion& torch, const CudaVersion& cuda,
              std::string_view platform, const PythonVersion& python);

// Plan order, by content only: stable whatever the order of the YAML file.
bool row_less(const Row& a, const Row& b);

// The platform's torch_index with the variant's code: "https://download.pytorch.org/whl/cu130".
std::string torch_index_url(const Platform& platform, const std::string& cuda_tag);

// Fills the fields derived from archs (ptx_arch) after they change.
void set_archs(Row& row, std::vector<Arch> archs);

}  // namespace sb::matrix
