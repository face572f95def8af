// Helpers for the matrix tests: small YAML documents written to temp files.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "sagebuild/common/error.h"
#include "sagebuild/matrix/matrix.h"

namespace sb::matrix::testing {

inline std::filesystem::path real_matrix_path() {
  return std::filesystem::path(SAGEBUILD_SOURCE_DIR) / "matrix" / "build-matrix.yaml";
}

inline std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / "sb_matrix_tests";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// A small valid matrix; tests append to it or swap lines to break it.
//  1 pythons ... 23 profiles' last line. Keep the line numbers in step with
//  the tests that count on them.
inline const char* kBase =
    "pythons: [\"3.10\", \"3.12\"]\n"  // 1
    "platforms:\n"                     // 2
    "  linux_x86_64: {runner: ubuntu-22.04, pypi_torch_has_cuda: true, "
    "torch_index: \"https://download.pytorch.org/whl/{cuda_tag}\"}\n"  // 3
    "cuda:\n"                                                          // 4
    "  \"12.6\": {archs: [\"8.0\", \"9.0\", \"9.0a\"]}\n"              // 5
    "  \"12.8\": {archs: [\"8.0\", \"9.0\", \"9.0a\", \"12.0\"]}\n"    // 6
    "torch:\n"                                                         // 7
    "  \"2.8.0\":\n"                                                   // 8
    "    pythons: [\"3.10\", \"3.12\"]\n"                              // 9
    "    variants:\n"                                                  // 10
    "      - {cuda: \"12.6\"}\n"                                       // 11
    "      - {cuda: \"12.8\", pypi: true}\n"                           // 12
    "packages:\n"                                                      // 13
    "  sageattention:\n"                                               // 14
    "    version: 2.2.0\n"                                             // 15
    "    kernels: kernels/families.json\n"                             // 16
    "    abi: abi3\n"                                                  // 17
    "    naming: build-tag\n"                                          // 18
    "    archs: [\"8.0\", \"9.0a\"]\n"                                 // 19
    "    optional_archs: [\"12.0\"]\n"                                 // 20
    "profiles:\n"                                                      // 21
    "  default:\n"                                                     // 22
    "    torch: [\"2.8.0\"]\n";                                        // 23

// Loads `text` from a temp file named `name`; returns the error message, or
// "no error" if it loaded.
inline std::string load_error(const std::string& name, const std::string& text, std::string* file = nullptr) {
  auto path = write_temp(name, text);
  if (file) *file = path.string();
  try {
    load_matrix(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace sb::matrix::testing
