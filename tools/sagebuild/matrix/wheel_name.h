// A row's wheel naming, through wheel/: the build tag or local version that
// records torch and CUDA (wheel/build_tag.h), and the file name
// (wheel/filename.h). Takes the matrix's typed torch and CUDA versions (a
// CUDA's own code and tag: CudaVersion::code(), tag()).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sagebuild/matrix/version.h"

namespace sb::matrix {

// "280.129" for torch 2.8.0 / CUDA 12.9; "21100.130" for torch 2.11.0 / CUDA
// 13.0. nullopt, with the reason in `why`, for versions the scheme cannot
// encode (torch 2.9.10).
std::optional<std::string> build_tag(const TorchVersion& torch, const CudaVersion& cuda, std::string* why = nullptr);

// "cu128torch2.9.0" (without the '+'); nullopt as above.
std::optional<std::string> local_version(const CudaVersion& cuda, const TorchVersion& torch,
                                         std::string* why = nullptr);

// {name}-{version}[-{build tag}]-{python tag}-{abi tag}-{platform}.whl, with
// the name escaped and the version normalized as the wheel spec requires.
std::string wheel_filename(std::string_view project, std::string_view version, std::string_view build_tag,
                           std::string_view python_tag, std::string_view abi_tag, std::string_view platform);

}  // namespace sb::matrix
