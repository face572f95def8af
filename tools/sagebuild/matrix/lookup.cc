#include "sagebuild/matrix/lookup.h"

#include <algorithm>

#include "sagebuild/common/arch.h"
#include "sagebuild/matrix/suggest.h"

namespace sb::matrix {
namespace {

template <typename T, typename Key, typename Wanted>
const T* find_by(const std::vector<T>& items, Key key, const Wanted& wanted) {
  for (const auto& item : items)
    if (item.*key == wanted) return &item;
  return nullptr;
}

}  // namespace

const CudaRelease* find_cuda(const Matrix& m, const CudaVersion& version) {
  return find_by(m.cuda, &CudaRelease::version, version);
}
const TorchRelease* find_torch(const Matrix& m, const TorchVersion& version) {
  return find_by(m.torch, &TorchRelease::version, version);
}
const Package* find_package(const Matrix& m, std::string_view name) {
  return find_by(m.packages, &Package::name, name);
}
const Platform* find_platform(const Matrix& m, std::string_view tag) {
  return find_by(m.platforms, &Platform::tag, tag);
}

bool cuda_builds(const CudaRelease& cuda, const Arch& arch) { return contains_arch(cuda.archs, arch); }

bool any_cuda_builds(const Matrix& m, const Arch& arch) {
  return std::any_of(m.cuda.begin(), m.cuda.end(), [&](const CudaRelease& cuda) { return cuda_builds(cuda, arch); });
}

std::string cuda_requirement(const Matrix& m, const Arch& arch) {
  // m.cuda is sorted ascending, so a contiguous run that reaches either end
  // reads as a bound.
  std::vector<std::string> builders;
  std::size_t first = m.cuda.size(), last = 0;
  for (std::size_t i = 0; i < m.cuda.size(); ++i) {
    if (!cuda_builds(m.cuda[i], arch)) continue;
    builders.push_back(m.cuda[i].version.release_str());
    first = std::min(first, i);
    last = i;
  }
  if (builders.empty()) return "is built by no CUDA in the matrix";
  bool contiguous = last - first + 1 == builders.size();
  if (contiguous && last == m.cuda.size() - 1) return "needs CUDA >= " + builders.front();
  if (contiguous && first == 0) return "needs CUDA <= " + builders.back();
  return "is built only by CUDA " + join(builders);
}

std::string variant_list(const TorchRelease& torch) {
  std::vector<std::string> cudas;
  for (const auto& v : torch.variants) cudas.push_back(v.cuda.release_str());
  return join(cudas);
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace sb::matrix
