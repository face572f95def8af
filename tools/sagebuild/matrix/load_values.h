// What every section of the build matrix reads its values with (load.cc,
// load_packages.cc): a name checked against the known ones, a version, an
// optional scalar or flag; and the names the earlier sections define, which
// the later ones refer to.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/matrix/yaml_reader.h"

namespace sb::matrix {

// ---- values -------------------------------------------------------------------

// `hint` says how to make a new value valid, where that is not obvious.
void check_known(const Located& value, const std::vector<std::string>& choices, std::string_view noun,
                 std::string_view hint = {});

// The value itself when it is a version (digits and dots), else ConfigError.
std::string version_text(const Located& value, std::string_view noun);

// The value as a CUDA release ("12.8": major.minor), else ConfigError.
CudaVersion cuda_version(const Located& value);
// The value as a torch release ("2.11.0", "2.10"), else ConfigError.
TorchVersion torch_version(const Located& value);
// The value as a Python release ("3.12"), else ConfigError.
PythonVersion python_version(const Located& value);

// The list under `key` (empty when absent), each item checked with
// check_known; `located` collects where each sits.
std::vector<std::string> known_list(const YamlMap& map, std::string_view key, const std::vector<std::string>& choices,
                                    std::string_view noun, std::vector<Located>* located = nullptr,
                                    std::string_view hint = {});

// known_list of the CUDA versions the matrix's `cuda:` lists.
std::vector<CudaVersion> known_cuda_list(const YamlMap& map, std::string_view key, const Matrix& m,
                                         std::vector<Located>* located = nullptr);
// known_list of the torch releases the matrix's `torch:` lists.
std::vector<TorchVersion> known_torch_list(const YamlMap& map, std::string_view key, const Matrix& m,
                                           std::vector<Located>* located = nullptr);
// known_list of the Pythons the matrix's `pythons:` lists; `hint` as check_known's.
std::vector<PythonVersion> known_python_list(const YamlMap& map, std::string_view key,
                                             const std::vector<PythonVersion>& pythons,
                                             std::vector<Located>* located = nullptr, std::string_view hint = {});

std::string optional_scalar(const YamlMap& map, std::string_view key);  // "" when absent
bool optional_bool(const YamlMap& map, std::string_view key);           // false when absent

// ---- names the later sections refer to ----------------------------------------

std::vector<std::string> torch_versions(const Matrix& m);
std::vector<std::string> python_versions(const std::vector<PythonVersion>& pythons);
std::vector<std::string> cuda_versions(const Matrix& m);
std::vector<std::string> platform_tags(const Matrix& m);
std::vector<std::string> package_names(const Matrix& m);

}  // namespace sb::matrix
