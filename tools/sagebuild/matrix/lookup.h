// Questions the loader, the row builder and the profile checks all ask of the
// model: find an entry by name, and which CUDA versions build an arch.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/matrix/matrix.h"

namespace sb::matrix {

const CudaRelease* find_cuda(const Matrix& m, const CudaVersion& version);
const TorchRelease* find_torch(const Matrix& m, const TorchVersion& version);
const Package* find_package(const Matrix& m, std::string_view name);
const Platform* find_platform(const Matrix& m, std::string_view tag);

bool cuda_builds(const CudaRelease& cuda, const Arch& arch);
bool any_cuda_builds(const Matrix& m, const Arch& arch);

// What an arch asks of the toolkit, for messages: "needs CUDA >= 12.8",
// "needs CUDA <= 12.9", or "is built only by CUDA 12.8, 13.0".
std::string cuda_requirement(const Matrix& m, const Arch& arch);

// The CUDA versions a torch release ships for: "11.8, 12.4, 12.6".
std::string variant_list(const TorchRelease& torch);

bool contains(const std::vector<std::string>& list, std::string_view item);
template <typename V>
bool contains(const std::vector<V>& list, const V& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace sb::matrix
