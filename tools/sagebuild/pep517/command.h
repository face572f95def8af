// Registers `sagebuild package-self` (tool_wheel.h) and `sagebuild sdist`
// (sdist.h): sagebuild as a Python build tool.
#pragma once

#include "sagebuild/common/cli.h"

namespace sb::pep517 {

void add_pep517_commands(CLI::App& app, cli::Context& ctx);

}  // namespace sb::pep517
