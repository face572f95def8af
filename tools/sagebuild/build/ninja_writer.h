// Writes the compile graph as a build.ninja that `ninja` executes: parallel
// (-j), with progress, incremental (its .ninja_log), and resumable after an
// interruption, since every command writes a temporary and renames it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/build/plan.h"

namespace sb::build {

// Escapes a path for a ninja build line ($, space, colon, newline).
std::string ninja_escape_path(std::string_view path);
// Escapes a variable value ($ only).
std::string ninja_escape_value(std::string_view value);

// The shell command of an edge: the compile writing edge.temp, then the rename.
std::string edge_shell_command(const Edge& edge);

// The complete build.ninja text (deterministic for a given graph).
std::string write_ninja(const CompileGraph& graph);

// The build.ninja of a Windows plan (windows_plan.h): the same rule and
// layout, each command the edge's CreateProcess command line (win_cmdline's
// quoting), since ninja on Windows hands `command` to CreateProcess as is.
// Edges write their outputs directly: there is no `mv` to rename with.
std::string write_windows_ninja(const std::vector<Edge>& edges, const std::vector<RowGraph>& rows);

}  // namespace sb::build
