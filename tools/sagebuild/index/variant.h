// A variant is one torch minor release x one CUDA release: the unit users
// choose (one index URL each), since pip itself cannot choose by the torch
// that is installed (see docs/releasing.md).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/index/model.h"

namespace sb::index {

// "torch2.8-cu129" for torch "2.8.0" and CUDA "12.9" (the CUDA code is the
// one build tags use: 12.10 -> "1210").  Throws sb::UsageError naming both
// inputs when either is not a release version.
std::string variant_name(std::string_view torch_version, std::string_view cuda_version);

struct VariantGroup {
  std::string name;                  // "torch2.8-cu129"
  std::string torch_minor;           // "2.8"
  std::string cuda_version;          // "12.9"
  std::vector<IndexedWheel> wheels;  // sorted by project, then file name
};

// Wheels grouped by variant, variants in name order.
std::vector<VariantGroup> group_by_variant(std::vector<IndexedWheel> wheels);

// The projects of a group, normalized names in order, each once.
std::vector<std::string> projects_of(const VariantGroup& group);

}  // namespace sb::index
