// Capturing what vcvars64.bat does to the environment.
//
// cl.exe and link.exe only work with INCLUDE, LIB, LIBPATH and PATH set the
// way vcvars64.bat sets them; running it and printing `set` afterwards is the
// documented way to learn them.  Here: the command line, the parser of the
// printed environment, and the difference from the environment we started
// with (what the build then adds to every compiler process).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/run/win_env.h"

namespace sb::toolchain {

using run::Environment;

// "<install>\VC\Auxiliary\Build\vcvars64.bat".
std::string vcvars64_path(std::string_view installation_path);

// The CreateProcess command line that runs vcvars64.bat quietly and then
// prints the resulting environment:
//   cmd.exe /d /s /c ""<bat>" >nul && set"
// Throws sb::UsageError when the path cannot pass through cmd.exe.
std::string vcvars_command_line(std::string_view vcvars_bat);

struct SetOutput {
  Environment env;
  // Lines that were not NAME=VALUE (vcvars' "[ERROR:...]" messages land
  // here when it fails, since it does not always set an exit code).
  std::vector<std::string> other_lines;
};

// Parses `set` output: one NAME=VALUE per line (CRLF or LF), split at the
// first '=' so values keep theirs.  Empty lines are ignored.
SetOutput parse_set_output(std::string_view text);

struct EnvChange {
  std::string name;
  std::string value;  // the new value (empty when removed)
  bool removed = false;
  // For ';'-separated lists (PATH, INCLUDE, LIB, LIBPATH): the entries the
  // new value has and the old one lacked, in order; compared
  // case-insensitively, ignoring a trailing '\'.
  std::vector<std::string> added_entries;
};

// What `after` changed relative to `base`, in `after`'s order, removals last.
std::vector<EnvChange> diff_environment(const Environment& base, const Environment& after);

// Names vcvars is expected to set; a capture missing any of them did not work.
const std::vector<std::string>& vcvars_required_names();

// Names in vcvars_required_names() that `env` lacks (empty: looks right).
std::vector<std::string> missing_vcvars_names(const Environment& env);

// Splits a ';'-separated list, dropping empty entries.
std::vector<std::string> split_path_list(std::string_view value);

}  // namespace sb::toolchain
