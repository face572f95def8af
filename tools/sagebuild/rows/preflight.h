// `sagebuild doctor --preprocess`: a header a row's toolchain lacks, found
// before any build by running the build's own compile commands through the
// preprocessor, and named with what provides it.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "sagebuild/rows/build.h"
#include "sagebuild/run/process.h"

namespace sb::rows {

// A missing header in a compiler's output: GCC/clang's "x.cu:3:10: fatal
// error: cublas_v2.h: No such file or directory" or cl.exe's "fatal error
// C1083: Cannot open include file: 'cublas_v2.h'".
struct MissingHeader {
  std::string header;         // "cublas_v2.h", as the #include names it
  std::string included_from;  // "/x/torch/include/ATen/cuda/CUDAContextLight.h:8" (empty for cl.exe)
};
std::optional<MissingHeader> find_missing_header(const std::string& compiler_output);

// `sagebuild doctor --preprocess`: each row's toolchain resolved or
// provisioned as a build would (torch, CUDA, the source's header packages,
// a host compiler the CUDA accepts), then every compile unit of the row's
// compile graph (plan_compile: the build's own command lines, with -E for
// -c) through the preprocessor.  Prints a line per unit and a summary per
// row; a missing header is named with the unit and what provides it.
// Returns 0 when every row passes, else 1.
int run_preflight(BuildOptions options, run::ProcessRunner& runner, std::ostream& out);

}  // namespace sb::rows
