// The compile graph's types: what the planner (plan/) produces and the ninja
// runner (run/ninja.h) writes out and runs.  Plain data, no behaviour.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sb::graph {

// One command producing one file.  `argv` writes `temp`; `command` is the
// line ninja runs, argv and then the rename of temp to output, in the host's
// syntax (a POSIX shell line, or a CreateProcess line): an interrupted build
// never leaves a truncated file under the output's name.
struct Edge {
  std::filesystem::path output;
  std::filesystem::path temp;
  std::vector<std::filesystem::path> inputs;
  std::vector<std::string> argv;
  std::string command;
  std::string description;  // "nvcc pv_fp8 kernels/src/pv_fp8.cu [8.9 9.0a]"
  // The command's peak memory as its manifest declares it (0: undeclared):
  // such commands share a ninja pool that memory bounds (run/ninja.h).
  double peak_memory_gib = 0;
};

// A name for a group of outputs (a row's extension modules): `ninja <name>`
// builds them.
struct Target {
  std::string name;
  std::vector<std::filesystem::path> outputs;
};

}  // namespace sb::graph
