// A CUDA fatbin section: containers, entries, LZ4 and zstd payloads, the
// cubins (ELF) and PTX inside, and the coverage computed from them.
#include "sagebuild/binary/fatbin.h"
#include "sagebuild/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  binary::MemorySource src{std::string(fuzz::bytes(data, size))};
  Findings out;
  auto cov = binary::cuda_coverage_of(src, 0, size, out);
  for (const auto& [kernel, unused] : cov.kernels) cov.runs_on(kernel, {90, 0});
  fuzz::check_bounded(out);
  return 0;
}
