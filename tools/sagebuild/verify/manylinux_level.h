// Which manylinux level a wheel's binaries satisfy, derived from their symbol
// versions (GLIBC_*, GLIBCXX_*, CXXABI_*, GCC_*, ...) and needed libraries
// against the policy, and what that says about the wheel's platform tags:
// a manylinux tag claiming an older level than the binaries need (P2,
// strict), a linux_* tag PyPI refuses (P2, warning naming the level to use).
#pragma once

#include <string>
#include <vector>

#include "sagebuild/common/finding.h"
#include "sagebuild/verify/binary_rules.h"
#include "sagebuild/verify/policy.h"

namespace sb::verify {

struct LevelContext {
  const PolicyTable& policy;
  const std::vector<std::string>& allowed_libraries;  // DT_NEEDED globs from torch/CUDA (P3's allow-list)
  const std::vector<std::string>& members;            // the wheel's members (libraries shipped via $ORIGIN)
};

// What keeps `b` out of `level` on `arch`: the P2/P3 messages ("needs
// GLIBC_2.34 from libc.so.6, outside manylinux_2_31"); empty when it fits.
std::vector<std::string> unmet(const BinaryFacts& b, const ManylinuxPolicy& level, const std::string& arch,
                               const LevelContext& ctx);

// The oldest level on `arch` whose policy every binary meets; nullptr when
// none does (a binary links libpython, or needs a library no level allows).
const ManylinuxPolicy* oldest_level(const std::vector<BinaryFacts>& binaries, const std::string& arch,
                                    const LevelContext& ctx);

// "manylinux_2_34_x86_64, the oldest level the binaries satisfy (manylinux_2_31
// is ruled out by ...)", or why no level fits.
std::string level_advice(const std::vector<BinaryFacts>& binaries, const std::string& arch, const LevelContext& ctx);

// P2 per linux or manylinux platform tag of a wheel holding `binaries` (its
// ELF libraries whose machine is the tag's).
void check_platform_levels(const std::vector<BinaryFacts>& binaries, const std::vector<std::string>& platform_tags,
                           const LevelContext& ctx, Findings& out);

}  // namespace sb::verify
