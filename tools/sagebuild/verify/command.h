// `sagebuild verify FILE...`: exit 0 when every wheel is clean, 1 when any
// has failing findings (Error, and Strict unless --lenient), 2 on usage or
// I/O errors (a file that does not exist or cannot be read).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "sagebuild/common/cli.h"
#include "sagebuild/verify/verify.h"

namespace sb::verify {

void add_verify_command(CLI::App& app, cli::Context& ctx);

// The command's body, apart from argument parsing: verifies each file,
// prints to `out` / `err`, returns the exit code.
int run_verify(const std::vector<std::string>& files, const Options& options, bool json, std::ostream& out,
               std::ostream& err, const Marks& marks = kAsciiMarks);

// `sagebuild explain NAME...`: what each wheel file name, build tag or local
// version says, part by part (wheel/explain.h), as text or a JSON array;
// returns 0 when every name decodes, 1 when any does not (its text says
// which part is wrong and what was expected).
void add_explain_command(CLI::App& app, cli::Context& ctx);
int run_explain(const std::vector<std::string>& names, bool json, std::ostream& out, const Marks& marks);

}  // namespace sb::verify
