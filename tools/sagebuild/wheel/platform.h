// Platform tags (docs/verify-rules.md F8; PCT "Platform tag", PEP 600 manylinux,
// PEP 656 musllinux, PEP 730 iOS, PEP 738 Android, pyemscripten): which
// family a platform tag belongs to, and the checks on a wheel's platform set.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/finding.h"

namespace sb::wheel {

enum class PlatformFamily {
  Any,
  Windows,     // win32, win_amd64, win_arm64, win_ia64
  Linux,       // linux_ARCH
  Manylinux,   // manylinux_X_Y_ARCH and the legacy manylinux1/2010/2014
  Musllinux,   // musllinux_X_Y_ARCH
  Macos,       // macosx_X_Y_ARCH
  Android,     // android_APILEVEL_ABI
  Ios,         // ios_X_Y_ARCH_SDK
  Emscripten,  // pyemscripten_YEAR_PATCH_wasm32
  Unknown      // anything else: legal in a file name, nothing we recognize
};
std::string_view to_string(PlatformFamily f);

struct PlatformInfo {
  PlatformFamily family = PlatformFamily::Unknown;
  // glibc (manylinux), musl (musllinux), macOS or iOS version; Android API
  // level in `major`; pyemscripten year.patch. 0 when not applicable.
  unsigned major = 0;
  unsigned minor = 0;
  std::string arch;             // "x86_64", "arm64_v8a", "universal2"; "" for any
  bool legacy_alias = false;    // manylinux1 / 2010 / 2014
  std::string problem;          // non-empty: recognized family, malformed for it
  bool strict_problem = false;  // the problem makes PyPI refuse it (S), else W
};

// Classifies one (lowercased) platform tag member.
PlatformInfo classify_platform(std::string_view platform);

// F8 for a wheel's platform set: malformed family members (S or W), linux_*
// (W: PyPI refuses it), `any` mixed with real platforms (W), manylinux mixed
// with musllinux (W).
Findings check_platforms(const std::vector<std::string>& platforms, std::string_view member = {});

}  // namespace sb::wheel
