// Which host this is, and the resolver that finds its toolchains: the one
// place that switches on the platform sagebuild runs on.
#pragma once

#include <memory>
#include <string>

#include "sagebuild/toolchain/resolver.h"

namespace sb::toolchain {

// The platform tag of the rows this host builds natively: "linux_x86_64",
// "linux_aarch64", "win_amd64".
std::string host_platform_tag();

// The resolver for this host's rows: GnuResolver on Linux, MsvcResolver
// (vswhere, vcvars64) on Windows.
std::unique_ptr<RowResolver> host_resolver(ProcessRunner& runner, const ToolchainOptions& options);

// The $PATH (or %PATH%) of this process.
std::string path_env();

}  // namespace sb::toolchain
