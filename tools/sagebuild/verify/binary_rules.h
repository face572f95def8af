// Rules over the facts the ELF and fatbin readers extract from each native
// library in a wheel: rules P1-P3 and B6-B9 of docs/verify-rules.md.  Each rule is a small
// function over plain data, so it is tested without building binaries.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sagebuild/common/finding.h"
#include "sagebuild/common/text.h"
#include "sagebuild/distinfo/build_info.h"
#include "sagebuild/verify/policy.h"
#include "sagebuild/wheel/torch_requirement.h"

namespace sb::verify {

struct UndefinedSymbol {
  std::string name;     // mangled
  std::string version;  // "GLIBC_2.17", "" when unversioned
  bool weak = false;
};

struct VersionNeed {
  std::string file;                   // "libc.so.6"
  std::vector<std::string> versions;  // "GLIBC_2.17", ...
};

// What the ELF reader says about one member.
struct BinaryFacts {
  std::string member;
  std::string machine;  // platform-tag spelling: "x86_64", "aarch64", "i686", "ppc64le", ...
  std::vector<std::string> needed;
  std::vector<std::string> rpaths;  // RPATH and RUNPATH entries
  std::vector<VersionNeed> verneed;
  std::vector<UndefinedSymbol> undefined;
};

// CUDA code in one library, per compute capability (89 = sm_89).
struct CudaCode {
  std::map<int, std::vector<std::string>> sass_kernels;  // SASS arch -> kernel names (sm_90 and sm_90a both at 90)
  std::map<std::string, std::vector<std::string>> sass_targets;  // exact SASS target "90a", "90" -> kernel names
  std::set<int> ptx;                                             // PTX archs
};

// P1: the ELF machine is the platform tag's architecture (linux-family tags).
// Strict: pip installs such a wheel; auditwheel refuses it.
void check_machine(const BinaryFacts& b, const std::string& platform_tag, Findings& out);
// P9: a PE image's machine (as its platform tag: win_amd64, win_arm64, win32)
// matches each Windows platform tag of the wheel.
void check_pe_machine(const std::string& member, const std::string& pe_platform, const std::string& platform_tag,
                      Findings& out);
// B7 for Windows: imported cudart64_<major>*.dll names the build-info's CUDA major.
void check_pe_cuda_runtime(const std::string& member, const std::vector<std::string>& imports,
                           const distinfo::BuildInfo& info, Findings& out);
// P2: every VERNEED version of a policy family is in the claimed policy's set.
void check_symbol_versions(const BinaryFacts& b, const ManylinuxPolicy& policy, const std::string& arch, Findings& out);
// P3 (manylinux claims only; nullptr policy = nothing to check): DT_NEEDED on the policy's whitelist, on the
// allow-list, or shipped in the wheel and reachable through $ORIGIN.  Never libpython.  `wheel_members` is sorted
// (looked up by binary search: a wheel has up to 200,000 members).
void check_needed_libraries(const BinaryFacts& b, const ManylinuxPolicy* policy,
                            const std::vector<std::string>& allowed_patterns,
                            const std::vector<std::string>& wheel_members, Findings& out);

// B6: CUDA code covers build_info.archs for every kernel family whose
// min_arch <= arch: SASS for that arch holding the family's kernels, or PTX
// for an arch <= it (the driver JIT-compiles PTX forward, never backward).
// A family with exact archs ("9.0a") needs, for each arch of build_info.archs
// that is a target's capability, SASS for exactly that target (sm_90a) holding
// its kernels: arch-specific code has no PTX to fall back on.  Targets whose
// capability the wheel does not list are not demanded.
void check_cuda_coverage(const CudaCode& code, const distinfo::BuildInfo& b, const std::string& member, Findings& out);
// B7: libcudart's soname major is the build's CUDA major, and torch's CUDA
// major matches it.
void check_cuda_runtime(const BinaryFacts& b, const distinfo::BuildInfo& info, Findings& out);
// B8: every undefined symbol comes from torch, CUDA, the C/C++ runtime, or
// (per-interpreter wheels) libpython.  B9: abi3 wheels use no private _Py symbol.
void check_symbol_origins(const BinaryFacts& b, bool abi3, Findings& out);

// How the library links torch, from its undefined symbols: C++ symbols of
// at::, c10::, torch:: or caffe2:: make it classic (torch's C++ ABI); only the
// stable C shim's (aoti_torch_*, torch_*) make it stable_abi; nullopt when it
// uses no torch symbol.
std::optional<wheel::TorchBinding> torch_binding(const BinaryFacts& b);

// Whether a name matches a glob with '*' (the allow-list's syntax).
using sb::glob_match;
// "at", "c10", "torch", "caffe2" as the outermost name of a mangled C++ symbol.
std::string outer_namespace(std::string_view mangled);

}  // namespace sb::verify
