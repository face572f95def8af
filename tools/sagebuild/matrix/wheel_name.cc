#include "sagebuild/matrix/wheel_name.h"

#include <stdexcept>

#include "sagebuild/wheel/build_tag.h"
#include "sagebuild/wheel/filename.h"
#include "sagebuild/wheel/pep440.h"

namespace sb::matrix {
namespace {

// The loader checked the package's version (a PEP 440 version), so a parse
// failure here is a bug, not a user error.
wheel::Version version(std::string_view text) {
  auto v = wheel::parse_version(text);
  if (!v) throw std::logic_error("wheel_name: not a version: " + std::string(text));
  return *v;
}

}  // namespace

std::optional<std::string> build_tag(const TorchVersion& torch, const CudaVersion& cuda, std::string* why) {
  return wheel::encode_build_tag(torch.wheel_release(), cuda.wheel_release(), why);
}

std::optional<std::string> local_version(const CudaVersion& cuda, const TorchVersion& torch, std::string* why) {
  return wheel::encode_local_version(cuda.wheel_release(), torch.wheel_release(), why);
}

std::string wheel_filename(std::string_view project, std::string_view wheel_version, std::string_view build_tag,
                           std::string_view python_tag, std::string_view abi_tag, std::string_view platform) {
  std::optional<std::string> tag;
  if (!build_tag.empty()) tag = std::string(build_tag);
  return wheel::format_wheel_filename(project, version(wheel_version), tag,
                                      wheel::Tag{std::string(python_tag), std::string(abi_tag), std::string(platform)});
}

}  // namespace sb::matrix
