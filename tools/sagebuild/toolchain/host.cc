#include "sagebuild/toolchain/host.h"

#include <cstdlib>

#include "sagebuild/toolchain/gnu_resolver.h"
#include "sagebuild/toolchain/msvc_resolver.h"

namespace sb::toolchain {

std::string path_env() {
  const char* p = std::getenv("PATH");
  return p ? p : "";
}

#if defined(_WIN32)

std::string host_platform_tag() { return "win_amd64"; }

std::unique_ptr<RowResolver> host_resolver(ProcessRunner& runner, const ToolchainOptions& options) {
  const char* pf86 = std::getenv("ProgramFiles(x86)");
  MsvcResolver::Host host{pf86 ? pf86 : "", [](run::Environment env) -> std::unique_ptr<ProcessRunner> {
                            return std::make_unique<run::WindowsProcessRunner>(std::move(env));
                          }};
  return std::make_unique<MsvcResolver>(runner, options, std::move(host));
}

#else

std::string host_platform_tag() {
#if defined(__x86_64__)
  return "linux_x86_64";
#elif defined(__aarch64__)
  return "linux_aarch64";
#else
  return "unsupported-host";
#endif
}

std::unique_ptr<RowResolver> host_resolver(ProcessRunner& runner, const ToolchainOptions& options) {
  return std::make_unique<GnuResolver>(runner, options);
}

#endif

}  // namespace sb::toolchain
