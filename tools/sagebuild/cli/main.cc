// sagebuild: builds, packs and verifies SageAttention wheels.
// This file only wires the subcommands together; each lives in its module.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "sagebuild/cli/args.h"
#include "sagebuild/common/cli.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/text.h"

#include "sagebuild/index/command.h"
#include "sagebuild/matrix/command.h"
#include "sagebuild/pep517/command.h"
#include "sagebuild/pep517/tool_wheel.h"
#include "sagebuild/rows/command.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/verify/command.h"

int main(int argc, char** argv) {
  CLI::App app{"sagebuild: build, pack and verify SageAttention wheels"};
  app.set_version_flag("--version", std::string("sagebuild ") + sb::pep517::tool_version());
  sb::cli::Context ctx;
  // Which rows' CUDA the build provisions from PyPI is the toolchain's rule;
  // `matrix --format github` passes it on to the workflow.
  sb::matrix::add_matrix_command(app, ctx, sb::toolchain::cuda_provisioned_from_pypi);
  sb::verify::add_verify_command(app, ctx);
  sb::verify::add_explain_command(app, ctx);
  sb::index::add_index_command(app, ctx);
  sb::pep517::add_pep517_commands(app, ctx);  // package-self, sdist
  // Registers `build` and `doctor`, and the top-level options that make a bare
  // `sagebuild --profile P` mean `sagebuild build --profile P`.
  sb::rows::add_build_command(app, ctx);
  sb::cli::set_failure_message(app);
  // Options before the subcommand are the subcommand's (cli/args.h).
  std::vector<std::string> args = sb::cli::subcommand_first(app, std::vector<std::string>(argv, argv + argc));
  std::vector<char*> args_c;
  for (auto& a : args) args_c.push_back(a.data());
  // Messages quote file names and file contents: printed escaped, their own
  // line breaks kept (text.h).
  try {
    app.parse(static_cast<int>(args_c.size()), args_c.data());
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const sb::ConfigError& e) {
    std::fprintf(stderr, "%s\n", sb::printable_message(e.what()).c_str());
    return 2;
  } catch (const sb::UsageError& e) {
    std::fprintf(stderr, "sagebuild: error: %s\n", sb::printable_message(e.what()).c_str());
    return 2;
  } catch (const sb::IoError& e) {
    std::fprintf(stderr, "sagebuild: error: %s\n", sb::printable_message(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sagebuild: internal error: %s\n", sb::printable_message(e.what()).c_str());
    return 2;
  }
  return ctx.exit_code;
}
