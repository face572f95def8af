#include "sagebuild/toolchain/host_toolchain.h"

#include <algorithm>

namespace sb::toolchain {

std::vector<std::string> nvcc_thread_flags(const CompileJob& job) {
  const int archs = static_cast<int>(job.gencode.size());
  const int side_by_side = std::min(job.device_threads, archs);
  if (job.kind != SourceKind::cuda || side_by_side <= 1) return {};
  return {"--threads=" + std::to_string(side_by_side)};
}

}  // namespace sb::toolchain
