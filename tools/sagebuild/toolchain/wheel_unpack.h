// Extracting part of a wheel (a zip) into a directory: the torch headers and
// libraries, or the nvidia/cuXX/ tree of NVIDIA's CUDA wheels.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sb::toolchain {

struct UnpackRule {
  std::string prefix;  // members starting with this are extracted ("torch/include/")
  std::string strip;   // removed from the front of the name ("nvidia/cu13/"), may be empty
};

// Extracts every file member matching a rule to dest/<name without strip>,
// keeping the Unix executable bits; refuses names with ".." or absolute
// paths.  Returns the number of files written.  Throws IoError.
std::size_t unpack_wheel(const std::filesystem::path& wheel, const std::filesystem::path& dest,
                         const std::vector<UnpackRule>& rules);

// Reads one member as text (e.g. "torch/version.py"); throws IoError when absent.
std::string read_wheel_member(const std::filesystem::path& wheel, const std::string& name);

}  // namespace sb::toolchain
