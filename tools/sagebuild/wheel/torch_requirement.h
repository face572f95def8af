// The torch requirement (Requires-Dist) a wheel with a compiled torch
// extension carries, from how the extension links torch, and the check of a
// requirement against that: one rule, which the matrix writes into each row
// (and so into METADATA) and `sagebuild verify` judges (B4).
//
//   stable ABI (built with TORCH_TARGET_VERSION 2.10, only the C shim's
//   symbols): loads in every torch >= 2.10, so "torch>=2.10,<3". pip then
//   never replaces the torch a user has; the CUDA build is the user's choice
//   of index (per-variant index), not the requirement's.
//
//   classic (C++ symbols of at::, c10::, torch::): needs the torch minor
//   release it was compiled against, so "torch==2.8.*". PyTorch promises no
//   C++ ABI across releases; patch releases ship fixes with the same headers
//   (one exception on record, pytorch/pytorch#88301: a pybind cast of jit
//   modules between 1.12.0 and 1.12.1, which a tensor-only binding does not
//   use). An exact ==2.8.0 would make pip replace a user's 2.8.1+cu129 with
//   PyPI's 2.8.0, a build for another CUDA.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sagebuild/wheel/requirement.h"

namespace sb::wheel {

enum class TorchBinding { classic, stable_abi };

// The requirement for an extension built against torch `torch` ("2.11.0"):
// stable_abi with target `stable_abi_target` ("2.10") -> "torch>=2.10,<3";
// classic -> "torch==2.8.*".
std::string torch_requirement(TorchBinding binding, std::string_view torch, std::string_view stable_abi_target = {});

// What is wrong with `requirement` for an extension built against `torch`;
// empty when it fits. Every binding: it admits `torch` itself. stable_abi:
// it also admits the next minor release (else pip replaces a newer torch the
// extension would load in). classic: it admits no other minor release.
// nullopt binding (not known): only the first rule.
std::string torch_requirement_problem(const Requirement& requirement, std::string_view torch,
                                      std::optional<TorchBinding> binding);

}  // namespace sb::wheel
