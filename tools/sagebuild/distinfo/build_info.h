// Our build-info record, shipped as `<package>/build_info.json` in every
// SageAttention wheel: what the wheel was built for and from.  verify's B
// rules compare it with the file name, WHEEL, METADATA and the binaries.
//
// Schema version 1 (see tools/sagebuild/distinfo/build_info.h for fields).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sagebuild/wheel/tags.h"

namespace sb::distinfo {

// A kernel family as built into the wheel (the record of what the row built;
// plan::KernelFamily is the recipe it was built from): either `min_arch`
// (built for every arch of `archs` at or above it) or `archs` (exactly these
// targets, e.g. "9.0a": SASS for sm_90a only, no PTX).  In the JSON an entry
// has one of the two keys; files without "archs" (sagebuild before it) read
// unchanged.
struct BuiltFamily {
  std::string min_arch;              // "8.0": the lowest compute capability it is built for; "" for an archs family
  std::string symbol_marker;         // substring of its kernels' mangled names
  std::vector<std::string> archs{};  // the exact targets built: "9.0a"; empty for a min_arch family
  bool operator==(const BuiltFamily&) const = default;
};

struct BuildInfo {
  int schema = 1;
  std::string package;                             // "sageattention"
  std::string version;                             // "2.2.0"
  wheel::AbiMode abi_mode = wheel::AbiMode::abi3;  // JSON: "abi3" | "cpython"
  std::vector<std::string> pythons;                // CPythons served: "3.9", "3.10", ...
  struct Wheel {
    std::optional<std::string> build_tag;      // "21100.130"
    std::optional<std::string> local_version;  // "cu128torch2.9.0"
    std::string python_tag;                    // "cp39"
    std::string abi_tag;                       // "abi3"
    std::string platform_tag;                  // "linux_x86_64"
    bool operator==(const Wheel&) const = default;
  } wheel;
  struct Torch {
    std::string version;  // "2.11.0"
    bool cxx11_abi = true;
    std::string cuda;  // the CUDA torch was built with: "13.0"
    bool operator==(const Torch&) const = default;
  } torch;
  struct Cuda {
    std::string version;  // "13.0"
    std::string nvcc;     // "13.0.88"
    bool operator==(const Cuda&) const = default;
  } cuda;
  std::vector<std::string> archs;                      // SASS targets: "8.0", "9.0", ...
  std::vector<std::string> ptx_archs;                  // PTX embedded for these
  std::map<std::string, BuiltFamily> kernel_families;  // "quant", "pv_fp16", "pv_fp8"
  struct Compiler {
    std::string id;  // "gcc" | "msvc" | "clang"
    std::string version;
    bool operator==(const Compiler&) const = default;
  } host_compiler;
  std::string platform;         // "linux_x86_64"
  std::string source_revision;  // git sha

  bool operator==(const BuildInfo&) const = default;
};

// Thrown by from_json with the JSON path of the offending field
// ("build_info.torch.version: expected a string, found number").
class BuildInfoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void to_json(nlohmann::json& j, const BuildInfo& b);
void from_json(const nlohmann::json& j, BuildInfo& b);  // throws BuildInfoError

// Parses and validates the file's text; throws BuildInfoError.
BuildInfo parse_build_info(std::string_view text);
// Pretty-printed, keys in a fixed order, trailing newline (reproducible).
std::string write_build_info(const BuildInfo& b);

}  // namespace sb::distinfo
