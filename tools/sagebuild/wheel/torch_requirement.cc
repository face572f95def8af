#include "sagebuild/wheel/torch_requirement.h"

#include <vector>

namespace sb::wheel {

namespace {

// Major and minor of a release ("2.11.0" -> 2, 11); nullopt if not one.
std::optional<std::pair<std::uint64_t, std::uint64_t>> major_minor(std::string_view text) {
  auto v = parse_version(text);
  if (!v || v->release.size() < 2) return std::nullopt;
  return std::pair(v->release[0], v->release[1]);
}

Version release(std::uint64_t major, std::uint64_t minor) {
  return *parse_version(std::to_string(major) + "." + std::to_string(minor) + ".0");
}

}  // namespace

std::string torch_requirement(TorchBinding binding, std::string_view torch, std::string_view stable_abi_target) {
  if (binding == TorchBinding::stable_abi) {
    auto target = major_minor(stable_abi_target);
    return "torch>=" + std::string(stable_abi_target) + ",<" + std::to_string(target ? target->first + 1 : 3);
  }
  auto mm = major_minor(torch);
  if (!mm) return "torch==" + std::string(torch);
  return "torch==" + std::to_string(mm->first) + "." + std::to_string(mm->second) + ".*";
}

std::string torch_requirement_problem(const Requirement& requirement, std::string_view torch,
                                      std::optional<TorchBinding> binding) {
  auto built = parse_version(torch);
  auto mm = major_minor(torch);
  if (!built || !mm) return "the build's torch version '" + std::string(torch) + "' is not a release";
  const SpecifierSet& spec = requirement.specifier;
  if (requirement.url || !spec.contains(*built, true))
    return "'" + requirement.str() + "' does not admit torch " + std::string(torch) + ", which the wheel is built for";
  if (binding == TorchBinding::stable_abi) {
    Version next = release(mm->first, mm->second + 1);
    if (!spec.contains(next, true))
      return "'" + requirement.str() +
             "' is too strict for a stable-ABI extension, which loads in every torch from its "
             "target on: it refuses torch " +
             next.str() + ", so pip would replace a newer torch";
  }
  if (binding == TorchBinding::classic) {
    std::vector<Version> others = {release(mm->first, mm->second + 1)};
    if (mm->second > 0) others.push_back(release(mm->first, mm->second - 1));
    for (const Version& other : others)
      if (spec.contains(other, true))
        return "'" + requirement.str() + "' admits torch " + other.str() +
               ", but the extension is built against the "
               "C++ ABI of torch " +
               std::to_string(mm->first) + "." + std::to_string(mm->second) + ", which only that minor release has";
  }
  return {};
}

}  // namespace sb::wheel
