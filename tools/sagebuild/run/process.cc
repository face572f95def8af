// The host-independent part of process.h: how a command is shown to a user.
// The runners are in process_posix.cc and process_win32.cc.
#include "sagebuild/run/process.h"

#include <cstring>

namespace sb::run {

std::string shell_quote(const std::string& arg) {
  if (arg.empty()) return "''";
  bool plain = true;
  for (char c : arg) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::strchr("-_./=:,+@%^", c) != nullptr;
    if (!ok) {
      plain = false;
      break;
    }
  }
  if (plain) return arg;
  std::string q = "'";
  for (char c : arg) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

std::string display(const Command& cmd) {
  std::string s;
  if (!cmd.cwd.empty()) s += "cd " + shell_quote(cmd.cwd.string()) + " && ";
  for (const auto& [k, v] : cmd.env) {
    if (v)
      s += k + "=" + shell_quote(*v) + " ";
    else
      s += "env -u " + k + " ";
  }
  for (std::size_t i = 0; i < cmd.argv.size(); ++i) {
    if (i) s += ' ';
    s += shell_quote(cmd.argv[i]);
  }
  return s;
}

std::string shell_run_then_move(const std::vector<std::string>& argv, const std::string& temp,
                                const std::string& output) {
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
  return cmd + " && mv -f " + shell_quote(temp) + " " + shell_quote(output);
}

}  // namespace sb::run
