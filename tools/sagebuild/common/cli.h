// The contract between the CLI (cli/main.cc) and each subcommand module.
//
// A module exposes `void add_<name>_command(CLI::App& app, sb::cli::Context& ctx)`
// in `sagebuild/<module>/command.h`; it registers its subcommand(s) on `app`
// and, from the callback, sets ctx.exit_code (0 clean, 1 findings/failed rows,
// 2 usage or I/O error).  Errors thrown as sb::UsageError / sb::IoError /
// sb::ConfigError are caught in main and reported with exit code 2.
#pragma once

namespace CLI {
class App;
}

namespace sb::cli {

struct Context {
  int exit_code = 0;
};

}  // namespace sb::cli
