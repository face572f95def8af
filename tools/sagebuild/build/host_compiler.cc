#include "sagebuild/build/host_compiler.h"

#include <map>
#include <regex>
#include <utility>

namespace sb::build {

std::string CompilerId::version() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<CompilerId> parse_compiler_version(std::string_view text) {
  std::string first(text.substr(0, text.find('\n')));
  std::smatch m;
  CompilerId c;
  static const std::regex clang_re(R"(clang version (\d+)\.(\d+)(?:\.(\d+))?)");
  static const std::regex gcc_re(R"(^(?:g\+\+|c\+\+|gcc|x86_64[\w-]*g\+\+)(?:-\d+)? \(.*\) (\d+)\.(\d+)(?:\.(\d+))?)");
  if (std::regex_search(first, m, clang_re)) c.id = "clang";
  else if (std::regex_search(first, m, gcc_re)) c.id = "gcc";
  else return std::nullopt;
  c.major = std::stoi(m[1].str());
  c.minor = std::stoi(m[2].str());
  c.patch = m[3].matched ? std::stoi(m[3].str()) : 0;
  return c;
}

std::optional<SupportedRange> supported_range(const std::string& cuda, const std::string& id) {
  // Maximums: crt/host_config.h of each toolkit (checked for 13.0.88 here:
  // "#if __GNUC__ > 15" and "(__clang_major__ >= 21)").  Minimums: the
  // installation guide's host compiler support policy (GCC 6.x, Clang 7.x
  // for CUDA 12 and 13 on x86_64).
  static const std::map<std::pair<std::string, std::string>, SupportedRange> table = {
      {{"12.4", "gcc"}, {6, 13, "CUDA 12.4 crt/host_config.h; CUDA installation guide"}},
      {{"12.4", "clang"}, {7, 17, "CUDA 12.4 crt/host_config.h; CUDA installation guide"}},
      {{"12.6", "gcc"}, {6, 13, "CUDA 12.6 crt/host_config.h; CUDA installation guide"}},
      {{"12.6", "clang"}, {7, 18, "CUDA 12.6 crt/host_config.h; CUDA installation guide"}},
      {{"12.8", "gcc"}, {6, 14, "CUDA 12.8 crt/host_config.h; CUDA installation guide"}},
      {{"12.8", "clang"}, {7, 19, "CUDA 12.8 crt/host_config.h; CUDA installation guide"}},
      {{"13.0", "gcc"}, {6, 15, "CUDA 13.0.88 crt/host_config.h; CUDA installation guide"}},
      {{"13.0", "clang"}, {7, 20, "CUDA 13.0.88 crt/host_config.h; CUDA installation guide"}},
  };
  auto it = table.find({cuda, id});
  if (it == table.end()) return std::nullopt;
  return it->second;
}

std::optional<int> max_major_from_host_config(std::string_view text, const std::string& id) {
  std::match_results<std::string_view::const_iterator> m;
  if (id == "gcc") {
    static const std::regex re(R"(#if __GNUC__ > (\d+))");
    if (std::regex_search(text.begin(), text.end(), m, re)) return std::stoi(m[1].str());
  } else if (id == "clang") {
    static const std::regex re(R"(\(__clang_major__ >= (\d+)\))");
    if (std::regex_search(text.begin(), text.end(), m, re)) return std::stoi(m[1].str()) - 1;
  }
  return std::nullopt;
}

std::string check_range(const CompilerId& c, const SupportedRange& r, const std::string& cuda) {
  if (c.major >= r.min_major && c.major <= r.max_major) return {};
  return c.id + " " + c.version() + " is not supported by CUDA " + cuda + " (supported: " + c.id +
         " " + std::to_string(r.min_major) + " to " + std::to_string(r.max_major) + ", per " +
         r.source + "); install a supported one and pass --host-compiler PATH";
}

}  // namespace sb::build
