// What a wheel's name says, part by part, in words: `sagebuild explain` and
// verify's per-component report.  Only decodes: the parsing is the other
// units' (filename.h, build_tag.h, pep440.h, tags.h, platform.h).
//
//   sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl
//     package               sageattention 2.2.0
//     PyTorch version tag   280 (2.8.0)
//     CUDA version tag      129 (12.9)
//     Python tag            cp312 (CPython 3.12)
//     ABI tag               cp312 (CPython 3.12's own ABI)
//     platform tag          linux_x86_64 (Linux, x86_64; ...)
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sb::wheel {

struct Part {
  std::string key;      // stable, for JSON: "package", "torch", "cuda", "python", "abi", "platform"
  std::string label;    // for people: "PyTorch version tag"
  std::string value;    // as written: "280"
  std::string decoded;  // what it means: "2.8.0"; empty when it says nothing more
  bool ok = true;       // false: `decoded` says what is wrong with it and what was expected
};

struct Explained {
  std::string kind;                     // "wheel file name", "build tag", "local version", "version"
  std::vector<Part> parts{};            // in the order of the name
  std::vector<std::string> problems{};  // each names the part, what is wrong and what was expected
  std::vector<std::string> notes{};     // what the name does not record
  bool ok() const { return problems.empty(); }
};

// A wheel file name (a path's directories are ignored).
Explained explain_wheel_filename(std::string_view filename);
// A build tag ("280.129", "21100.130").
Explained explain_build_tag(std::string_view tag);
// A local version label ("+cu128torch2.9.0", with or without '+').
Explained explain_local_version(std::string_view label);

// Any of those, or a version with a local label ("1.0.0+cu128torch2.9.0"):
// told apart by their shape.  Something that is none of them has one problem
// saying which forms are expected.
Explained explain_name(std::string_view text);

// The words for one tag of each kind: "cp312" -> "CPython 3.12", "abi3" ->
// "CPython's stable ABI (abi3)...", "manylinux_2_28_x86_64" -> "glibc >= 2.28, x86_64".
std::string describe_python_tag(std::string_view tag);
std::string describe_abi_tag(std::string_view tag);
std::string describe_platform_tag(std::string_view tag);

}  // namespace sb::wheel
