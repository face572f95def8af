#include "sagebuild/toolchain/host_toolchain.h"

#include <algorithm>
#include <regex>

#include "sagebuild/common/error.h"

namespace sb::toolchain {

std::vector<std::string> nvcc_thread_flags(const CompileJob& job) {
  const int archs = static_cast<int>(job.gencode.size());
  const int side_by_side = std::min(job.device_threads, archs);
  if (job.kind != SourceKind::cuda || side_by_side <= 1) return {};
  return {"--threads=" + std::to_string(side_by_side)};
}

std::string PythonVersion::nodot() const { return std::to_string(major) + std::to_string(minor); }

PythonVersion parse_python_version(const std::string& text, const std::string& what) {
  static const std::regex re(R"((\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_match(text, m, re))
    throw UsageError(what + ": Python version \"" + text + "\" is not <major>.<minor>, e.g. 3.12");
  return PythonVersion{std::stoi(m[1].str()), std::stoi(m[2].str())};
}

}  // namespace sb::toolchain
