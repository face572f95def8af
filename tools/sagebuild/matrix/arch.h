// CUDA compilation targets, written as the compute capability: "8.6", "9.0a".
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "sagebuild/matrix/matrix.h"

namespace sb::matrix {

// "9.0a" -> {name "9.0a", sm 90, arch_specific true}; "12.0" -> sm 120.
// nullopt unless "<major>.<minor>[a]" with a one-digit minor.
std::optional<Arch> parse_arch(std::string_view text);

// Ascending by sm; for the same sm, "9.0" before "9.0a".
bool arch_less(const Arch& a, const Arch& b);

bool contains_arch(const std::vector<Arch>& archs, const Arch& arch);

// The arch that also gets PTX, so the wheel JIT-compiles on GPUs newer than
// any it names: the newest portable one (arch-specific PTX runs only on its
// own arch, so it cannot serve newer GPUs). nullopt if all are arch-specific.
std::optional<Arch> ptx_arch(const std::vector<Arch>& sorted_archs);

}  // namespace sb::matrix
