// CUDA compilation targets, the one type for them in sagebuild: the matrix
// and the manifests write them as compute capabilities ("8.6", "9.0a"),
// nvcc as sm_86 / compute_90a, build_info.json as the capability ("9.0")
// or, for an exact target, the written form ("9.0a").
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/error.h"

namespace sb {

// "9.0a" is {90, true}: sm_90a, whose arch-specific instructions (wgmma)
// run on that exact arch only.  Ordered by sm, "9.0" before "9.0a".
struct Arch {
  int sm = 0;  // the compute capability as nvcc numbers it: 90, 120
  bool arch_specific = false;

  std::string name() const;        // "9.0a", as the matrix and the manifests write it
  std::string capability() const;  // "9.0": the compute capability, without the 'a'
  std::string code() const;        // "90a", as in sm_90a and compute_90a
  std::string sass() const { return "sm_" + code(); }
  std::string ptx() const { return "compute_" + code(); }
  auto operator<=>(const Arch&) const = default;
};

// "9.0a" -> {90, true}; "12.0" -> {120, false}.  nullopt unless
// "<major>.<minor>[a]": a major of one or two digits without a leading zero,
// a one-digit minor.
std::optional<Arch> parse_arch(std::string_view text);

// What an error says of a `text` that is not an arch, and how to write one.
std::string not_an_arch(std::string_view text);

// parse_arch for a command-line argument: throws UsageError naming `what`
// ("--archs") when `text` is not an arch.
Arch parse_arch_arg(std::string_view text, const std::string& what);

// parse_arch for a value read from a file: throws ConfigError at `where`.
Arch parse_arch_at(std::string_view text, const SourceLocation& where);

// Whether `a` is at least `min`'s compute capability ("9.0a" is 9.0).
bool arch_at_least(const Arch& a, const Arch& min);

// Whether `row_arch` is the base arch of the target: same capability, with or
// without the 'a' ("9.0" and "9.0a" both are for "9.0a").
bool same_base_arch(const Arch& row_arch, const Arch& target);

bool contains_arch(const std::vector<Arch>& archs, const Arch& arch);

// The arch that also gets PTX, so the wheel JIT-compiles on GPUs newer than
// any it names: the newest portable one (arch-specific PTX runs only on its
// own arch, so it cannot serve newer GPUs). nullopt if all are arch-specific.
std::optional<Arch> ptx_arch(const std::vector<Arch>& sorted_archs);

}  // namespace sb
