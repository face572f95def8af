// Writes the compile graph as a build.ninja that `ninja` executes: parallel
// (-j), with progress, incremental (its .ninja_log), and resumable after an
// interruption, since every command writes a temporary and renames it.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace sb::build
