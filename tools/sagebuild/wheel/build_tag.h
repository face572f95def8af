// How a SageAttention wheel says which torch and CUDA it was built for.
// Two schemes are in use; both are encoded and decoded here.
//
// 1. Build-tag scheme:  sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl
//
//    build tag = <torch code> "." <cuda code>
//
//    torch code
//      torch < 2.10, every component a single digit:   M m p      2.8.0  -> "280"
//      torch >= 2.10:                     M*10000 + m*100 + p     2.10.0 -> "21000"
//                                                                 2.11.1 -> "21101"
//                                                                 3.0.0  -> "30000"
//      Legacy codes have exactly 3 digits (< 1000); new codes have 5 or more
//      (>= 10000), so the length alone says which rule applies: "2110" (4
//      digits, 2.1.10 or 21.1.0?) is rejected. Every version has exactly one
//      code: "20800" (2.8.0 in the new form) and "300" (3.0.0 in the old form)
//      are rejected as non-canonical. Minor and patch must stay below 100.
//      torch < 2.10 with a two-digit component (1.13.1, 2.9.10) cannot be
//      encoded: the legacy form has no room, and using the new form would put
//      it above 2.10+ in pip's order.
//      pip sorts build tags by int(leading digits) first, and the split at
//      2.10 keeps that order monotonic in the torch version: all legacy codes
//      are <= 299 < 21000.
//
//    cuda code (CUDA major 10..99)
//      minor <= 9:   MM m     12.9 -> "129", 13.0 -> "130"
//      minor >= 10:  MM mm    12.10 -> "1210"
//      3 digits = single-digit minor, 4 digits = two-digit minor; "1205" is
//      rejected (12.5 is "125"). The CUDA code sits in the string part of
//      pip's sort key, so a (so far hypothetical) two-digit minor would sort
//      below "13x" but also below "129": never rely on build-tag order across
//      CUDA versions.
//
// 2. Local-version scheme:  sageattn3-1.0.0+cu128torch2.9.0-cp312-...
//
//    local label = "cu" <cuda code> "torch" <torch version, normalized>
//    with the same cuda code as above. The torch version is written in full,
//    so it needs no code. PyPI refuses local versions: this scheme is for
//    wheels served from our own index.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sagebuild/wheel/pep440.h"

namespace sb::wheel {

// The torch and CUDA releases a wheel name records (distinfo's BuildInfo is
// the whole build record, build_info.json).
struct TorchCudaVersions {
  Version torch;  // release only, 3 components ("2.8.0")
  Version cuda;   // release only, 2 components ("12.9")
};

// "280.129" for torch 2.8.0 and CUDA 12.9. Both versions must be final
// releases without local labels ("2.8.0", not "2.8.0+cu128" or "2.9.0rc1");
// torch may have 1 to 3 release components, CUDA 1 or 2.
std::optional<std::string> encode_build_tag(const Version& torch, const Version& cuda, std::string* why = nullptr);

// The inverse; rejects ambiguous, non-canonical or malformed tags.
std::optional<TorchCudaVersions> decode_build_tag(std::string_view tag, std::string* why = nullptr);

// "cu128torch2.9.0" (no leading '+') for CUDA 12.8 and torch 2.9.0.
std::optional<std::string> encode_local_version(const Version& cuda, const Version& torch, std::string* why = nullptr);

// The inverse. Accepts the label with or without its '+', in any spelling
// PEP 440 normalizes to the canonical one ("CU128_torch2.9.0").
std::optional<TorchCudaVersions> decode_local_version(std::string_view local, std::string* why = nullptr);

// The CUDA code shared by both schemes: 12.9 -> "129", 12.10 -> "1210".
std::optional<std::string> encode_cuda_code(const Version& cuda, std::string* why = nullptr);
std::optional<Version> decode_cuda_code(std::string_view code, std::string* why = nullptr);

// "cu129": the CUDA code with the "cu" that local versions, PyTorch's index
// URLs, row ids and index variants write before it (the one place that
// writes it); nullopt as encode_cuda_code.
std::optional<std::string> encode_cuda_tag(const Version& cuda, std::string* why = nullptr);

}  // namespace sb::wheel
