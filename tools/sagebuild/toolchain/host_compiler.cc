#include "sagebuild/toolchain/host_compiler.h"

#include <map>
#include <regex>
#include <utility>

namespace sb::toolchain {

std::string CompilerId::version() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<CompilerId> parse_compiler_version(std::string_view text) {
  std::string first(text.substr(0, text.find('\n')));
  std::smatch m;
  CompilerId c;
  static const std::regex clang_re(R"(clang version (\d+)\.(\d+)(?:\.(\d+))?)");
  static const std::regex gcc_re(
      R"(^(?:g\+\+|c\+\+|gcc|(?:x86_64|aarch64)[\w-]*g\+\+)(?:-\d+)? \(.*\) (\d+)\.(\d+)(?:\.(\d+))?)");
  if (std::regex_search(first, m, clang_re))
    c.id = "clang";
  else if (std::regex_search(first, m, gcc_re))
    c.id = "gcc";
  else
    return std::nullopt;
  c.major = std::stoi(m[1].str());
  c.minor = std::stoi(m[2].str());
  c.patch = m[3].matched ? std::stoi(m[3].str()) : 0;
  return c;
}

std::optional<SupportedRange> supported_range(const matrix::CudaVersion& cuda, const std::string& id) {
  // What each release's crt/host_config.h enforces (nvcc #errors outside it
  // unless -allow-unsupported-compiler), read from NVIDIA's wheels on PyPI:
  //   CUDA  wheel (crt/host_config.h)          gcc                clang
  //   11.8  nvidia-cuda-nvcc-cu11 11.8.89      __GNUC__ > 11      __clang_major__ >= 15
  //   12.4  nvidia-cuda-nvcc-cu12 12.4.131     __GNUC__ > 13      __clang_major__ >= 18
  //   12.6  nvidia-cuda-nvcc-cu12 12.6.85      __GNUC__ > 13      __clang_major__ >= 19
  //   12.8  nvidia-cuda-nvcc-cu12 12.8.93      __GNUC__ > 14      __clang_major__ >= 20
  //   12.9  nvidia-cuda-nvcc-cu12 12.9.86      __GNUC__ > 14      __clang_major__ >= 20  (same header as 12.8.93)
  //   13.0  nvidia-cuda-crt 13.0.88            __GNUC__ > 15      __clang_major__ >= 21
  //   13.2  nvidia-cuda-crt 13.2.86            __GNUC__ > 15      __clang_major__ >= 22
  // (CUDA 13 moved the header from nvidia-cuda-nvcc to nvidia-cuda-crt.)
  // Minimums: no header checks a gcc minimum; every one rejects clang < 3.3
  // (kept as major 3: ranges are in majors).  NVIDIA's installation guide
  // documents higher minimums as its support policy; nvcc does not enforce
  // them and neither do we.
  // MSVC, for when `sagebuild build` drives it: _MSC_VER 1910-1939 (11.8),
  // 1910-1949 (12.4-12.9), 1920-1949 (13.0), 1920-1959 (13.2).
  static const std::map<std::pair<std::string, std::string>, SupportedRange> table = {
      {{"11.8", "gcc"}, {0, 11, "crt/host_config.h of nvidia-cuda-nvcc-cu11 11.8.89"}},
      {{"11.8", "clang"}, {3, 14, "crt/host_config.h of nvidia-cuda-nvcc-cu11 11.8.89"}},
      {{"12.4", "gcc"}, {0, 13, "crt/host_config.h of nvidia-cuda-nvcc-cu12 12.4.131"}},
      {{"12.4", "clang"}, {3, 17, "crt/host_config.h of nvidia-cuda-nvcc-cu12 12.4.131"}},
      {{"12.6", "gcc"}, {0, 13, "crt/host_config.h of nvidia-cuda-nvcc-cu12 12.6.85"}},
      {{"12.6", "clang"}, {3, 18, "crt/host_config.h of nvidia-cuda-nvcc-cu12 12.6.85"}},
      {{"12.8", "gcc"}, {0, 14, "crt/host_config.h of nvidia-cuda-nvcc-cu12 12.8.93"}},
      {{"12.8", "clang"}, {3, 19, "crt/host_config.h of nvidia-cuda-nvcc-cu12 12.8.93"}},
      {{"12.9", "gcc"}, {0, 14, "crt/host_config.h of nvidia-cuda-nvcc-cu12 12.9.86"}},
      {{"12.9", "clang"}, {3, 19, "crt/host_config.h of nvidia-cuda-nvcc-cu12 12.9.86"}},
      {{"13.0", "gcc"}, {0, 15, "crt/host_config.h of nvidia-cuda-crt 13.0.88"}},
      {{"13.0", "clang"}, {3, 20, "crt/host_config.h of nvidia-cuda-crt 13.0.88"}},
      {{"13.2", "gcc"}, {0, 15, "crt/host_config.h of nvidia-cuda-crt 13.2.86"}},
      {{"13.2", "clang"}, {3, 21, "crt/host_config.h of nvidia-cuda-crt 13.2.86"}},
  };
  auto it = table.find({cuda.release_str(), id});
  if (it == table.end()) return std::nullopt;
  return it->second;
}

std::optional<int> max_major_from_host_config(std::string_view text, const std::string& id) {
  std::match_results<std::string_view::const_iterator> m;
  if (id == "gcc") {
    static const std::regex re(R"(#if __GNUC__ > (\d+))");
    if (std::regex_search(text.begin(), text.end(), m, re)) return std::stoi(m[1].str());
  } else if (id == "clang") {
    // The generic clang check, not the ones before it for other clangs
    // (HOS: __HORIZON__) that may allow other versions.
    std::size_t generic = text.find("defined(__clang__) && !defined(__ibmxl_vrm__)");
    auto from = text.begin() + (generic == std::string_view::npos ? 0 : generic);
    static const std::regex re(R"(\(__clang_major__ >= (\d+)\))");
    if (std::regex_search(from, text.end(), m, re)) return std::stoi(m[1].str()) - 1;
  }
  return std::nullopt;
}

std::string check_range(const CompilerId& c, const SupportedRange& r, const matrix::CudaVersion& cuda) {
  if (c.major >= r.min_major && c.major <= r.max_major) return {};
  std::string range = r.min_major > 0 ? std::to_string(r.min_major) + " to " + std::to_string(r.max_major)
                                      : "up to " + std::to_string(r.max_major);
  return c.id + " " + c.version() + " is not supported by CUDA " + cuda.release_str() + " (supported: " + c.id + " " +
         range + ", per " + r.source + "); install a supported one and pass --host-compiler PATH";
}

}  // namespace sb::toolchain
