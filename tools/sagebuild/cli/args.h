// The command line as sagebuild reads it, before CLI11 parses it: options are
// accepted before or after the subcommand ("sagebuild --profile P matrix" is
// "sagebuild matrix --profile P"), and parse errors say what to run for help.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sb::cli {

// argv with the subcommand moved right after the program name, so the options
// written before it are the subcommand's (an option it does not take is then
// an error, not silently the top level's).  The subcommand is the first
// argument that names one of `app`'s subcommands and is not the value of the
// option before it; without one, or when "--version" or "--" comes first,
// argv is returned unchanged.
std::vector<std::string> subcommand_first(const CLI::App& app, const std::vector<std::string>& argv);

// Parse errors printed as "sagebuild: error: ..." with the subcommand's
// --help to run, instead of CLI11's bare text.
void set_failure_message(CLI::App& app);

}  // namespace sb::cli
