// The compile graph as ninja runs it: the build.ninja text, and running ninja
// for some targets through a ProcessRunner.  Parallel (-j), with progress,
// incremental (ninja's own log) and resumable after an interruption, since
// every step writes a temporary name and renames it when complete.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/graph.h"
#include "sagebuild/run/process.h"

namespace sb::run {

using graph::Edge;
using graph::Target;

// Escapes a path for a build line ($, space, colon).  A line break cannot be
// written in build.ninja: UsageError, naming the path.
std::string ninja_escape_path(std::string_view path);
// Escapes a variable value ($).  A line break: UsageError, as above.
std::string ninja_escape_value(std::string_view value);

// The complete build.ninja text, deterministic for given edges, targets and
// memory.  Edges that declare their peak memory run in the pool `memory`, at
// most max(1, memory_gib / the largest such peak) at once; memory_gib 0
// (unknown) leaves them unbounded but by -j.
std::string ninja_file(const std::vector<Edge>& edges, const std::vector<Target>& targets, double memory_gib = 0);

// The depth of that pool: 0 when no edge declares a peak or memory_gib is 0.
int memory_pool_depth(const std::vector<Edge>& edges, double memory_gib);

struct NinjaRun {
  std::filesystem::path dir;  // holds build.ninja
  int jobs = 1;
  bool keep_going = false;
  std::string program = "ninja";  // looked up on the runner's PATH
  // Where ninja's streamed output goes (Command::on_output); unset: our stdout.
  std::function<void(std::string_view chunk, bool from_stderr)> on_output;
};

// Runs ninja for `targets` (its progress streamed) and returns those it did
// not finish (empty: all built).  Throws UsageError when ninja cannot be
// started, saying how to install it.
std::vector<std::string> run_ninja(ProcessRunner& runner, const NinjaRun& run, const std::vector<std::string>& targets);

}  // namespace sb::run
