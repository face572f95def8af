// The host C++ compiler nvcc drives (and we link with): gcc or clang, and
// whether the nvcc version accepts it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sagebuild/matrix/version.h"

namespace sb::toolchain {

struct CompilerId {
  std::string id;  // "gcc" | "clang"
  int major = 0, minor = 0, patch = 0;
  std::string version() const;  // "12.2.0"
};

// Parses the first line of `c++ --version` (Debian, Red Hat, Ubuntu, upstream builds).
std::optional<CompilerId> parse_compiler_version(std::string_view text);

// The host compiler majors a CUDA release accepts: what nvcc enforces in
// crt/host_config.h (it #errors outside the range), minimum and maximum.
struct SupportedRange {
  int min_major = 0, max_major = 0;  // min 0: the header sets no minimum
  std::string source;                // the header (and wheel) it was read from
};

// From the table for a CUDA release; nullopt when the release is not in it.
std::optional<SupportedRange> supported_range(const matrix::CudaVersion& cuda, const std::string& compiler_id);

// The maximum the toolkit itself enforces, read from <cuda>/include/crt/host_config.h
// ("#if __GNUC__ > 15"; for clang the generic check's "__clang_major__ >= 21",
// not the HOS one before it); nullopt when not found.
std::optional<int> max_major_from_host_config(std::string_view text, const std::string& compiler_id);

// Empty when `c` is inside `range`; otherwise what is wrong and how to fix it.
std::string check_range(const CompilerId& c, const SupportedRange& range, const matrix::CudaVersion& cuda);

}  // namespace sb::toolchain
