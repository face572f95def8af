#include "sagebuild/cli/args.h"

#include <CLI/CLI.hpp>

#include <utility>

#include "sagebuild/common/text.h"

namespace sb::cli {

namespace {

const CLI::App* subcommand_named(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->check_name(name)) return sub;
  return nullptr;
}

// How many of the following arguments the option `arg` takes as its values,
// {at least, at most}: {0, 0} for a flag, an unknown option or one written
// "--name=value" / "-jVALUE".
std::pair<std::size_t, std::size_t> values_after(const CLI::App& app, const std::string& arg) {
  if (arg.find('=') != std::string::npos) return {0, 0};
  bool long_name = arg.rfind("--", 0) == 0;
  if (!long_name && arg.size() != 2) return {0, 0};  // "-j4", "-kn"
  const CLI::Option* opt = app.get_option_no_throw(arg);
  if (opt == nullptr) return {0, 0};
  auto count = [](int n) { return n <= 0 ? std::size_t{0} : static_cast<std::size_t>(n); };
  return {count(opt->get_items_expected_min()), count(opt->get_items_expected_max())};
}

}  // namespace

std::vector<std::string> subcommand_first(const CLI::App& app, const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--" || arg == "--version") return argv;
    if (!arg.empty() && arg[0] == '-') {
      // Skip the option's values as CLI11 takes them: the least it needs
      // whatever they are, then more up to the next option or subcommand.
      auto [least, most] = values_after(app, arg);
      std::size_t taken = 0;
      for (; taken < least && i + 1 < argv.size(); ++taken) ++i;
      for (; taken < most && i + 1 < argv.size() && !argv[i + 1].empty() && argv[i + 1][0] != '-' &&
             subcommand_named(app, argv[i + 1]) == nullptr;
           ++taken)
        ++i;
      continue;
    }
    if (subcommand_named(app, arg) == nullptr) continue;  // a positional of the top level
    if (i == 1) return argv;
    std::vector<std::string> out{argv[0], arg};
    for (std::size_t k = 1; k < argv.size(); ++k)
      if (k != i) out.push_back(argv[k]);
    return out;
  }
  return argv;
}

void set_failure_message(CLI::App& app) {
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string help = "sagebuild";
    // The innermost subcommand the parse got to names the --help to read.
    const CLI::App* inner = a;
    for (const CLI::App* sub = a; sub != nullptr;) {
      auto parsed = sub->get_subcommands();
      if (parsed.empty()) break;
      inner = sub = parsed.front();
      help += " " + sub->get_name();
    }
    std::string what = e.what();
    // CLI11 lists unexpected arguments last to first; say them in order.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      std::string extras;
      for (const auto& x : inner->remaining()) extras += (extras.empty() ? "" : " ") + x;
      if (!extras.empty()) what = "`" + help + "` does not take " + extras;
    }
    // The arguments it quotes are the user's bytes: printed escaped (text.h),
    // on one line, as every other error.
    return "sagebuild: error: " + printable(what) + "\n  (`" + help + " --help` lists the options)\n";
  });
}

}  // namespace sb::cli
