// Registers `sagebuild build` and `sagebuild doctor`, and makes a bare
// `sagebuild [--profile P | --row ID ...]` mean `sagebuild build ...`.
#pragma once

#include "sagebuild/common/cli.h"

namespace sb::rows {

void add_build_command(CLI::App& app, cli::Context& ctx);

}  // namespace sb::rows
