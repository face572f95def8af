// What every harness shares: the libFuzzer entry point's signature, and the
// invariants a hostile input must never break whatever else it does.
// Each harness is built twice: with libFuzzer and the sanitizers by
// scripts/fuzz.sh (clang), and with replay_main.cc into a plain program that
// CTest runs over the inputs that once failed (regressions/<harness>/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sagebuild/common/finding.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace sb::fuzz {

inline std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A broken invariant is a crash, so the fuzzer keeps the input.
[[noreturn]] inline void broken(const char* what) {
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

// A report stays bounded whatever the input (common/finding.h).
inline void check_bounded(const Findings& f) {
  if (f.size() > Findings::kMaxFindings) broken("more findings kept than kMaxFindings");
  for (const Finding& x : f)
    if (x.message.size() > Findings::kMaxText + 64 || x.member.size() > Findings::kMaxText + 64 ||
        x.expected.size() > Findings::kMaxText + 64)
      broken("a finding's text is longer than kMaxText");
}

}  // namespace sb::fuzz
