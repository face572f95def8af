// `sagebuild verify`: every rule of docs/verify-rules.md (F, Z, D, W, M, R,
// E and P for any wheel, our B rules for wheels that carry build_info.json).
// Reads the wheel once, streaming; never writes anything.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/verify/report.h"

namespace sb::verify {

struct Options {
  bool lenient = false;  // only Error fails (Strict is reported, not fatal)
  // A directory whose manylinux-policy.json (the format of
  // tools/sagebuild/verify/manylinux-policy.json) replaces the built-in
  // policy, e.g. a newer one.  Empty: the built-in policy.
  std::filesystem::path policy_dir;
  // DT_NEEDED patterns (glob with '*') that come from torch or CUDA, not from
  // the system: auditwheel would need --exclude for them.
  std::vector<std::string> allowed_libraries = {"libtorch*",          "libc10*",     "libcudart.so.*", "libshm.so*",
                                                "libtorch_python.so", "libcuda.so.1"};
  zip::Limits limits;
};

// The policy file options.policy_dir holds.
inline constexpr const char* kPolicyFile = "manylinux-policy.json";

// SAGEBUILD_POLICY_DIR from the environment when set; else empty (the
// built-in policy).
std::filesystem::path default_policy_dir();

class PolicyTable;
// The built-in manylinux policy, or the one in options.policy_dir (loaded
// once per process per directory; IoError when it cannot be read).
const PolicyTable& policy_for(const Options& options);

// The platform tag a wheel for `platform` earns, derived by the rules verify
// judges a wheel's tags with (manylinux_level.h): for linux_<arch>, the
// manylinux tag of the oldest level whose policy every one of `libraries`
// (ELF files on disk, with the member names they will have in the wheel)
// meets; `members` are all the wheel's members (libraries it ships itself).
// When no level fits, or for any other platform, the tag stays `platform`.
struct DerivedTag {
  std::string tag;  // "manylinux_2_34_x86_64"
  std::string why;  // "manylinux_2_34_x86_64, the oldest level ... (manylinux_2_31 is ruled out by ...)"
};
struct NamedLibrary {
  std::filesystem::path file;
  std::string member;  // "sageattention/_C.abi3.so"
};
// A file that is no ELF64 library counts for nothing here (verify's P8 judges
// it in the wheel).  Throws IoError when a library cannot be read.
DerivedTag derive_platform_tag(const std::string& platform, const std::vector<NamedLibrary>& libraries,
                               std::vector<std::string> members, const Options& options);

// Verifies one wheel.  Throws IoError when the file cannot be opened or read
// (exit code 2); every problem with its content is a finding.
Report verify_wheel(const std::filesystem::path& path, const Options& options);

}  // namespace sb::verify
