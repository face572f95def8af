#include "sagebuild/pep517/command.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "sagebuild/common/os.h"
#include "sagebuild/pep517/sdist.h"
#include "sagebuild/pep517/tool_wheel.h"

namespace sb::pep517 {

void add_pep517_commands(CLI::App& app, cli::Context& ctx) {
  auto self_out = std::make_shared<std::filesystem::path>();
  CLI::App* self = app.add_subcommand(
      "package-self", "write this sagebuild as a wheel (the executable and the PEP 517 backend), verified");
  self->add_option("--out", *self_out, "the directory the wheel goes into")->required();
  self->callback([self_out, &ctx] {
    auto path = package_self(current_executable(), *self_out, std::cout);
    std::cout << path.string() << "\n";
    ctx.exit_code = 0;
  });

  struct SdistOptions {
    std::filesystem::path out = "dist", source_dir = ".";
  };
  auto sd = std::make_shared<SdistOptions>();
  CLI::App* sdist = app.add_subcommand("sdist", "write the source distribution of this repository's package");
  sdist->add_option("--out", sd->out, "the directory the .tar.gz goes into (default: dist/)");
  sdist->add_option("--source-dir", sd->source_dir, "the checkout (default: the current directory)")
      ->check(CLI::ExistingDirectory);
  sdist->callback([sd, &ctx] {
    std::cout << write_sdist(sd->source_dir, sd->out).string() << "\n";
    ctx.exit_code = 0;
  });
}

}  // namespace sb::pep517
