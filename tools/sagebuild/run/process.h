// Running external tools (nvcc, ninja, pip, python, the host compiler).
//
// Everything that spawns a process goes through ProcessRunner, so the
// planner and the toolchain discovery are testable with a fake runner.  One
// real runner per host kind: PosixProcessRunner (process_posix.cc, tested in
// process_test.cc) and WindowsProcessRunner (process_win32.cc, compiled only
// for Windows; process_win32_test.cc runs it as a Windows program, built with
// mingw-w64 and run under wine where both are installed).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if defined(_WIN32)
#include "sagebuild/run/win_env.h"
#endif

namespace sb::run {

struct Command {
  Command() = default;
  Command(std::vector<std::string> args) : argv(std::move(args)) {}  // NOLINT: implicit on purpose
  std::vector<std::string> argv;                                     // argv[0] is looked up on PATH
  std::map<std::string, std::optional<std::string>> env;             // overrides; nullopt unsets
  std::filesystem::path cwd;                                         // empty: inherit
  bool stream_output = false;  // also copy stdout/stderr to ours as it arrives (ninja progress)
  // With stream_output: each chunk goes here instead of to our stdout/stderr
  // (`from_stderr`: the child's stderr), never from two threads at once; the
  // output is captured in Result all the same.  (ninja's log filter.)
  std::function<void(std::string_view chunk, bool from_stderr)> on_output;
  // Windows runners: hand this line to CreateProcess as is instead of joining
  // argv (cmd.exe lines such as vcvars', which argv quoting would break).
  // POSIX runners refuse a command that has one.
  std::optional<std::string> windows_command_line;
};

struct Result {
  int exit_code = -1;    // the process's exit status; 128+N when killed by signal N
  std::string out;       // captured stdout
  std::string err;       // captured stderr
  bool spawned = false;  // false: the program could not be started (see err)
  double seconds = 0;
  bool ok() const { return spawned && exit_code == 0; }
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs to completion.  Never throws for a failing program; failure to
  // start it is reported as spawned = false with the reason in err.
  virtual Result run(const Command& cmd) = 0;
};

#if defined(_WIN32)
// CreateProcessW with the command line joined by win_cmdline's rules (or
// Command::windows_command_line as is), an explicit UTF-16 environment block
// (the base environment with the command's overrides, sorted as Windows
// requires), stdin from NUL, and stdout/stderr drained by one thread each,
// so neither pipe can fill up and deadlock the child.  argv[0] without a
// directory is looked up on the child's PATH (.exe, .com); .bat/.cmd files
// are refused in argv form (cmd.exe re-parses their arguments: see
// win_cmdline.h).  The exit code is GetExitCodeProcess's value as an int
// (an NTSTATUS crash code such as 0xC0000005 is negative).
class WindowsProcessRunner : public ProcessRunner {
 public:
  // Children get `base` (vcvars64.bat's captured environment, say) instead
  // of this process's environment; the command's overrides apply on top.
  WindowsProcessRunner() = default;
  explicit WindowsProcessRunner(Environment base) : base_(std::move(base)) {}
  Result run(const Command& cmd) override;

 private:
  std::optional<Environment> base_;
};
using HostProcessRunner = WindowsProcessRunner;
#else
// posix_spawn + two pipes drained with poll(), so neither stream can fill
// up and deadlock the child however much it writes.
class PosixProcessRunner : public ProcessRunner {
 public:
  Result run(const Command& cmd) override;
};
using HostProcessRunner = PosixProcessRunner;
#endif

// One argument quoted for a POSIX shell, only when needed ("a b" -> 'a b').
std::string shell_quote(const std::string& arg);
// The whole command as a user could paste it into a shell, env and cwd included.
std::string display(const Command& cmd);
// The POSIX shell line that runs `argv` and, when it succeeds, renames `temp`
// over `output` (mv -f): a build step's atomic output (win_cmdline.h has the
// cmd.exe counterpart).
std::string shell_run_then_move(const std::vector<std::string>& argv, const std::string& temp,
                                const std::string& output);

// The first executable named `name` in the PATH directories (or `name`
// itself when it contains a '/'); nullopt when none.  On Windows: PATH is
// ';'-separated and bare names get .exe/.com (run::win_search_path).
std::optional<std::filesystem::path> find_program(const std::string& name, const std::string& path_env);
std::optional<std::filesystem::path> find_program(const std::string& name);

}  // namespace sb::run
