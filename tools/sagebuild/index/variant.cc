#include "sagebuild/index/variant.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "sagebuild/common/error.h"
#include "sagebuild/wheel/build_tag.h"
#include "sagebuild/wheel/pep440.h"

namespace sb::index {

namespace {

wheel::Version release_version(std::string_view text, std::string_view what) {
  std::string why;
  auto v = wheel::parse_version(text, &why);
  if (!v || v->release.empty()) {
    throw UsageError(std::string(what) + " version '" + std::string(text) + "' is not a version (" + why +
                     "); expected e.g. 2.8.0");
  }
  return *v;
}

}  // namespace

std::string variant_name(std::string_view torch_version, std::string_view cuda_version) {
  wheel::Version torch = release_version(torch_version, "torch");
  wheel::Version cuda = release_version(cuda_version, "CUDA");
  std::string why;
  auto tag = wheel::encode_cuda_tag(cuda.base_version(), &why);
  if (!tag) {
    throw UsageError("CUDA version '" + std::string(cuda_version) + "' has no CUDA code (" + why +
                     "); expected e.g. 12.9");
  }
  std::uint64_t minor = torch.release.size() > 1 ? torch.release[1] : 0;
  return "torch" + std::to_string(torch.release[0]) + "." + std::to_string(minor) + "-" + *tag;
}

std::vector<VariantGroup> group_by_variant(std::vector<IndexedWheel> wheels) {
  std::map<std::string, VariantGroup> groups;
  for (auto& w : wheels) {
    VariantGroup& g = groups[w.variant];
    if (g.name.empty()) {
      g.name = w.variant;
      auto torch = release_version(w.torch_version, "torch");
      g.torch_minor =
          std::to_string(torch.release[0]) + "." + std::to_string(torch.release.size() > 1 ? torch.release[1] : 0);
      g.cuda_version = w.cuda_version;
    }
    g.wheels.push_back(std::move(w));
  }
  std::vector<VariantGroup> out;
  for (auto& [name, g] : groups) {
    std::sort(g.wheels.begin(), g.wheels.end(), [](const IndexedWheel& a, const IndexedWheel& b) {
      return std::tie(a.project, a.filename) < std::tie(b.project, b.filename);
    });
    out.push_back(std::move(g));
  }
  // Numeric order, newest last: torch2.10 after torch2.9, cu130 after cu129.
  std::sort(out.begin(), out.end(), [](const VariantGroup& a, const VariantGroup& b) {
    auto key = [](const VariantGroup& g) {
      return std::make_pair(release_version(g.torch_minor, "torch"), release_version(g.cuda_version, "CUDA"));
    };
    return key(a) < key(b);
  });
  return out;
}

std::vector<std::string> projects_of(const VariantGroup& group) {
  std::vector<std::string> names;
  for (const auto& w : group.wheels) {
    if (names.empty() || names.back() != w.project) names.push_back(w.project);
  }
  return names;
}

}  // namespace sb::index
