// The build matrix: YAML (the shape limits, then yaml-cpp) and the loader.
// A ConfigError is the expected answer to a bad document; anything else
// escaping is a bug.
#include "sagebuild/common/error.h"
#include "sagebuild/fuzz/fuzz.h"
#include "sagebuild/matrix/matrix.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    sb::matrix::parse_matrix(std::string(sb::fuzz::bytes(data, size)), "fuzz.yaml");
  } catch (const sb::ConfigError&) {
  }
  return 0;
}
