#include "sagebuild/platform/toolchain.h"

namespace sb::platform {

std::string PythonVersion::nodot() const {
  return std::to_string(major) + std::to_string(minor);
}

const std::vector<std::string>& torch_link_libraries() {
  static const std::vector<std::string> libs{"c10", "torch", "torch_cpu", "torch_cuda",
                                             "c10_cuda"};
  return libs;
}

}  // namespace sb::platform
