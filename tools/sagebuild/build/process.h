// Running external tools (nvcc, ninja, pip, python, the host compiler).
//
// Everything that spawns a process goes through ProcessRunner, so the
// planner and the toolchain discovery are testable with a fake runner; the
// POSIX implementation is tested for real in process_test.cc.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sb::build {

struct Command {
  Command() = default;
  Command(std::vector<std::string> args) : argv(std::move(args)) {}  // NOLINT: implicit on purpose
  std::vector<std::string> argv;                             // argv[0] is looked up on PATH
  std::map<std::string, std::optional<std::string>> env;     // overrides; nullopt unsets
  std::filesystem::path cwd;                                 // empty: inherit
  bool stream_output = false;  // also copy stdout/stderr to ours as it arrives (ninja progress)
  // Windows runners: hand this line to CreateProcess as is instead of joining
  // argv (cmd.exe lines such as vcvars', which argv quoting would break).
  // POSIX runners refuse a command that has one.
  std::optional<std::string> windows_command_line;
};

struct Result {
  int exit_code = -1;          // the process's exit status; 128+N when killed by signal N
  std::string out;             // captured stdout
  std::string err;             // captured stderr
  bool spawned = false;        // false: the program could not be started (see err)
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

// posix_spawn + two pipes drained with poll(), so neither stream can fill
// up and deadlock the child however much it writes.
class PosixProcessRunner : public ProcessRunner {
 public:
  Result run(const Command& cmd) override;
};

// One argument quoted for a POSIX shell, only when needed ("a b" -> 'a b').
std::string shell_quote(const std::string& arg);
// The whole command as a user could paste it into a shell, env and cwd included.
std::string display(const Command& cmd);

// The first executable named `name` in the PATH directories (or `name`
// itself when it contains a '/'); nullopt when none.
std::optional<std::filesystem::path> find_program(const std::string& name,
                                                  const std::string& path_env);
std::optional<std::filesystem::path> find_program(const std::string& name);

}  // namespace sb::build
