// The predicted wheel file name of a row.
//
// wheel/build_tag.h (encode_build_tag / encode_local_version) owns the
// encoding; until its implementation is linked into the tree, these follow the
// rules that header documents, and wheel_name_test.cc pins them to its
// examples so the switch-over cannot change a name silently.
#pragma once

#include <string>
#include <string_view>

namespace sb::matrix {

// "280.129" for torch 2.8.0 / CUDA 12.9; "21100.130" for torch 2.11.0 / CUDA 13.0.
std::string build_tag(std::string_view torch, std::string_view cuda);

// "cu128torch2.9.1" (without the '+').
std::string local_version(std::string_view cuda, std::string_view torch);

// "cu130": the CUDA code used in ids and local versions.
std::string cuda_tag(std::string_view cuda);

// {name}-{version}[-{build tag}]-{python tag}-{abi tag}-{platform}.whl, the
// name escaped as the wheel spec requires ('-' and '.' become '_').
std::string wheel_filename(std::string_view project, std::string_view version,
                           std::string_view build_tag, std::string_view python_tag,
                           std::string_view abi_tag, std::string_view platform);

}  // namespace sb::matrix
