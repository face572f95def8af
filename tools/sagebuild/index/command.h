// `sagebuild index DIR --out SITE [--base-url URL] [--wheels-url URL]`.
#pragma once

#include "sagebuild/common/cli.h"

namespace sb::index {

void add_index_command(CLI::App& app, sb::cli::Context& ctx);

}  // namespace sb::index
