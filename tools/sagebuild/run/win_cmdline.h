// One argv <-> one Windows command line.
//
// CreateProcess takes a single string; the child's C runtime splits it again
// (the rules of Microsoft's "Parsing C++ command-line arguments", which
// CommandLineToArgvW shares for everything after the program name).  Quoting
// and splitting live together here so that the round trip is tested:
// split_command_line(join_command_line(argv)) == argv for any argv without
// NUL bytes.
//
// cmd.exe is different: when the program is a .bat/.cmd file, CreateProcess
// runs cmd.exe, which expands %VAR% (and !VAR!) even inside quotes and lets a
// '"' in an argument end the quoting and expose & | < > to the shell.  No
// escaping is reliable for every cmd.exe setting, so cmd_argument() refuses
// those characters instead of trying.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::run {

// One argument, quoted when it is empty or has a space, tab, newline or '"':
// backslashes are doubled only where they precede a '"' (an escaped one or
// the closing one), and '"' becomes \".  Otherwise returned unchanged.
std::string quote_argument(std::string_view arg);

// The program name (argv[0]) follows other rules: no escapes at all, quotes
// only group.  Returns nullopt when it cannot be represented (it contains a
// '"'), since no quoting would give it back.
std::optional<std::string> quote_program(std::string_view program);

// argv[0] via quote_program, the rest via quote_argument, joined by spaces.
// Throws sb::UsageError when argv is empty or argv[0] has a '"'.
std::string join_command_line(const std::vector<std::string>& argv);

// Which rules the first word follows.
enum class FirstWord { Program, Argument };

// The inverse: splits as the MSVC runtime does.  With FirstWord::Program the
// first word ends at the first blank outside quotes and backslashes in it are
// literal (CommandLineToArgvW's rule).
std::vector<std::string> split_command_line(std::string_view line, FirstWord first = FirstWord::Program);

// Why `arg` cannot pass through cmd.exe safely (it has '"', '%', '!', a
// newline or a NUL), or nullopt when it can.
std::optional<std::string> cmd_unsafe_reason(std::string_view arg);

// `arg` quoted for a cmd.exe command line: wrapped in quotes when it is empty
// or contains a blank or one of cmd's operators (& | < > ^ ( ) , ; =), which
// are literal inside quotes.  Throws sb::UsageError naming the argument and
// the reason when cmd_unsafe_reason() says it cannot be passed.
std::string cmd_argument(std::string_view arg);

// The line that runs a batch file and then `tail` (already cmd syntax, e.g.
// ">nul && set") under `cmd.exe /d /s /c "..."`: /s makes cmd strip exactly
// the outer pair of quotes, so the batch path keeps its own quotes; /d skips
// AutoRun commands from the registry, which would otherwise print into the
// output we parse.  The batch path and args go through cmd_argument().
std::string cmd_batch_line(std::string_view batch, const std::vector<std::string>& args, std::string_view tail);

// The line that runs `argv` under cmd.exe and, when it succeeds, moves `temp`
// over `output` (`move /y`): how a build step writes its output atomically on
// Windows, where ninja hands its command to CreateProcess and there is no
// POSIX shell.  Each argument passes cmd.exe as cmd_argument() quotes it and
// then the program's C runtime as quote_argument() would (backslashes before a
// closing quote are doubled).  Throws sb::UsageError, as cmd_argument() does,
// for an argument cmd.exe cannot pass.
std::string cmd_run_then_move(const std::vector<std::string>& argv, std::string_view temp, std::string_view output);

}  // namespace sb::run
