// CUDA compilation targets, written as the compute capability: "8.6", "9.0a".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/matrix/matrix.h"

namespace sb::matrix {

// "9.0a" -> {name "9.0a", sm 90, arch_specific true}; "12.0" -> sm 120.
// nullopt unless "<major>.<minor>[a]" with a one-digit minor.
std::optional<Arch> parse_arch(std::string_view text);

// The same, for a command-line argument or a file: throws UsageError naming
// `what` ("--archs") when `text` is not an arch.
Arch parse_arch_arg(std::string_view text, const std::string& what);

// Whether `a` is at least `min`'s compute capability ("9.0a" is 9.0).
bool arch_at_least(const Arch& a, const Arch& min);

// Whether `row_arch` is the base arch of the target: same capability, with or
// without the 'a' ("9.0" and "9.0a" both are for "9.0a").
bool same_base_arch(const Arch& row_arch, const Arch& target);

// Ascending by sm; for the same sm, "9.0" before "9.0a".
bool arch_less(const Arch& a, const Arch& b);

bool contains_arch(const std::vector<Arch>& archs, const Arch& arch);

// The arch that also gets PTX, so the wheel JIT-compiles on GPUs newer than
// any it names: the newest portable one (arch-specific PTX runs only on its
// own arch, so it cannot serve newer GPUs). nullopt if all are arch-specific.
std::optional<Arch> ptx_arch(const std::vector<Arch>& sorted_archs);

}  // namespace sb::matrix
