// `sagebuild verify`: every CHECKLIST.md rule this tool can judge (F, Z, D,
// W, M, R, E, P1-P3, P10, P11) plus our own B rules for wheels that carry
// build_info.json.  Reads the wheel once, streaming; never writes anything.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/verify/report.h"

namespace sb::verify {

struct Options {
  bool lenient = false;  // only Error fails (Strict is reported, not fatal)
  // Directory holding manylinux_symbol_limits.tsv and manylinux_lib_whitelist.tsv
  // (auditwheel's policy, flattened).  Empty: P2/P3 are skipped with a note.
  std::filesystem::path policy_dir;
  // DT_NEEDED patterns (glob with '*') that come from torch or CUDA, not from
  // the system: auditwheel would need --exclude for them.
  std::vector<std::string> allowed_libraries = {"libtorch*", "libc10*", "libcudart.so.*", "libshm.so*",
                                                "libtorch_python.so", "libcuda.so.1"};
  zip::Limits limits;
};

// The policy directory the build was configured with (the corpus' reference/
// in a source tree), or SAGEBUILD_POLICY_DIR from the environment when set.
std::filesystem::path default_policy_dir();

// Verifies one wheel.  Throws IoError when the file cannot be opened or read
// (exit code 2); every problem with its content is a finding.
Report verify_wheel(const std::filesystem::path& path, const Options& options);

}  // namespace sb::verify
