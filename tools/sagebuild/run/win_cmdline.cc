#include "sagebuild/run/win_cmdline.h"

#include "sagebuild/common/error.h"

namespace sb::run {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool needs_quotes(std::string_view arg) {
  return arg.empty() || arg.find_first_of(" \t\n\v\"") != std::string_view::npos;
}

}  // namespace

std::string quote_argument(std::string_view arg) {
  if (!needs_quotes(arg)) return std::string(arg);
  std::string out = "\"";
  std::size_t backslashes = 0;
  for (char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    // Backslashes are literal unless a '"' follows; then each one must be
    // doubled, plus one more to escape the quote itself.
    std::size_t copies = c == '"' ? backslashes * 2 + 1 : backslashes;
    out.append(copies, '\\');
    out += c;
    backslashes = 0;
  }
  // The closing quote follows: double the trailing run so it stays literal.
  out.append(backslashes * 2, '\\');
  out += '"';
  return out;
}

std::optional<std::string> quote_program(std::string_view program) {
  if (program.find('"') != std::string_view::npos) return std::nullopt;
  if (!needs_quotes(program)) return std::string(program);
  return "\"" + std::string(program) + "\"";
}

std::string join_command_line(const std::vector<std::string>& argv) {
  if (argv.empty()) throw UsageError("cannot build a command line from an empty argv");
  auto program = quote_program(argv[0]);
  if (!program) {
    throw UsageError("program path '" + argv[0] +
                     "' contains '\"', which a Windows command line cannot carry; "
                     "expected a path without quotes");
  }
  std::string line = *program;
  for (std::size_t i = 1; i < argv.size(); ++i) line += " " + quote_argument(argv[i]);
  return line;
}

namespace {

// The program name: up to the first blank outside quotes; '"' only groups.
std::size_t split_program(std::string_view line, std::string& word) {
  bool quoted = false;
  std::size_t i = 0;
  for (; i < line.size(); ++i) {
    char c = line[i];
    if (c == '"') {
      quoted = !quoted;
    } else if (is_blank(c) && !quoted) {
      break;
    } else {
      word += c;
    }
  }
  return i;
}

// One argument starting at line[i] (not a blank); returns the index after it.
std::size_t split_argument(std::string_view line, std::size_t i, std::string& word) {
  bool quoted = false;
  while (i < line.size() && (quoted || !is_blank(line[i]))) {
    std::size_t backslashes = 0;
    while (i < line.size() && line[i] == '\\') {
      ++backslashes;
      ++i;
    }
    if (i < line.size() && line[i] == '"') {
      word.append(backslashes / 2, '\\');
      if (backslashes % 2 == 1) {
        word += '"';  // an escaped quote
      } else if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        word += '"';  // "" inside quotes: a literal quote, quoting goes on
        ++i;
      } else {
        quoted = !quoted;
      }
      ++i;
    } else {
      word.append(backslashes, '\\');
      if (i < line.size() && (quoted || !is_blank(line[i]))) word += line[i++];
    }
  }
  return i;
}

}  // namespace

std::vector<std::string> split_command_line(std::string_view line, FirstWord first) {
  std::vector<std::string> argv;
  std::size_t i = 0;
  if (first == FirstWord::Program) {
    std::string program;
    i = split_program(line, program);
    argv.push_back(std::move(program));
  }
  while (true) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i >= line.size()) break;
    std::string word;
    i = split_argument(line, i, word);
    argv.push_back(std::move(word));
  }
  return argv;
}

std::optional<std::string> cmd_unsafe_reason(std::string_view arg) {
  if (arg.find('"') != std::string_view::npos)
    return "it contains '\"', which ends cmd.exe's quoting and exposes the rest to the shell";
  if (arg.find('%') != std::string_view::npos)
    return "it contains '%', which cmd.exe expands as a variable even inside quotes";
  if (arg.find('!') != std::string_view::npos)
    return "it contains '!', which cmd.exe expands when delayed expansion is on";
  if (arg.find_first_of("\r\n") != std::string_view::npos)
    return "it contains a line break, which ends the cmd.exe command";
  if (arg.find('\0') != std::string_view::npos) return "it contains a NUL byte";
  return std::nullopt;
}

std::string cmd_argument(std::string_view arg) {
  if (auto why = cmd_unsafe_reason(arg)) {
    throw UsageError("refusing to pass '" + std::string(arg) + "' through cmd.exe: " + *why +
                     "; expected a path or argument without \" % ! or line breaks");
  }
  bool quote = arg.empty() || arg.find_first_of(" \t&|<>^(),;=") != std::string_view::npos;
  return quote ? "\"" + std::string(arg) + "\"" : std::string(arg);
}

std::string cmd_batch_line(std::string_view batch, const std::vector<std::string>& args, std::string_view tail) {
  // The batch path is always quoted: cmd's /s rule then strips only the
  // outer quotes we add around the whole command.
  if (auto why = cmd_unsafe_reason(batch)) {
    throw UsageError("refusing to run '" + std::string(batch) + "' through cmd.exe: " + *why);
  }
  std::string inner = "\"" + std::string(batch) + "\"";
  for (const auto& a : args) inner += " " + cmd_argument(a);
  if (!tail.empty()) inner += " " + std::string(tail);
  return "cmd.exe /d /s /c \"" + inner + "\"";
}

namespace {

// cmd_argument()'s quoting, plus the C runtime's rule that 2n backslashes
// before a quote are n: a quoted argument ending in '\' keeps its backslash.
std::string cmd_program_argument(std::string_view arg) {
  std::string quoted = cmd_argument(arg);
  if (quoted.size() < 2 || quoted.front() != '"') return quoted;
  std::size_t trailing = 0;
  while (trailing < arg.size() && arg[arg.size() - 1 - trailing] == '\\') ++trailing;
  return "\"" + std::string(arg) + std::string(trailing, '\\') + "\"";
}

}  // namespace

std::string cmd_run_then_move(const std::vector<std::string>& argv, std::string_view temp, std::string_view output) {
  if (argv.empty()) throw UsageError("cmd_run_then_move: empty argv");
  if (auto why = cmd_unsafe_reason(argv[0]))
    throw UsageError("refusing to run '" + argv[0] + "' through cmd.exe: " + *why);
  // Always quoted, so that /s strips exactly the outer pair added below.
  std::string inner = "\"" + argv[0] + "\"";
  for (std::size_t i = 1; i < argv.size(); ++i) inner += " " + cmd_program_argument(argv[i]);
  inner += " && move /y " + cmd_argument(temp) + " " + cmd_argument(output) + " >nul";
  return "cmd.exe /d /s /c \"" + inner + "\"";
}

}  // namespace sb::run
