// Dotted release numbers as the matrix writes them: "3.12", "12.8", "2.11.0",
// compared numerically, and the CUDA version type built on them.  PEP 440
// proper (wheel names and metadata) lives in wheel/pep440.h.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/wheel/pep440.h"

namespace sb::matrix {

struct DottedVersion {
  std::vector<int> parts;

  // Digits separated by single dots, each part without leading zeros
  // ("3.10" yes, "3.010", "3.", "v3" no); nullopt otherwise.
  static std::optional<DottedVersion> parse(std::string_view text);

  // Missing trailing parts count as 0: 12.8 == 12.8.0 < 12.10.
  std::strong_ordering operator<=>(const DottedVersion& other) const;
  bool operator==(const DottedVersion& other) const { return (*this <=> other) == 0; }
};

// A CUDA version, read into numbers once where it enters (the matrix's YAML,
// nvcc --version: toolchain/cuda.h) and passed as this afterwards: a release
// as the matrix names it ("12.8": major.minor, patch 0) or the version an
// nvcc reports ("13.0.88").  Wheel names carry its code (wheel/build_tag.h).
struct CudaVersion {
  int major = 0, minor = 0, patch = 0;

  // "12.8": major.minor, each part as DottedVersion::parse accepts it
  // ("12", "12.08", "12.8.1" no); nullopt otherwise.
  static std::optional<CudaVersion> parse_release(std::string_view text);

  CudaVersion release() const { return {major, minor, 0}; }  // 13.0.88 -> 13.0
  std::string release_str() const;                           // "13.0"
  std::string full_str() const;                              // "13.0.88"
  // The code wheel names carry: "130" for 13.0, "1210" for 12.10; nullopt,
  // with the reason in `why`, outside major 10..99 and minor 0..99 (CUDA 9.2).
  std::optional<std::string> code(std::string* why = nullptr) const;
  // "cu130": the code as PyTorch's index, row ids and local versions write
  // it.  Only for a version code() accepts (the loader checks every row's).
  std::string tag() const;
  // The release as PEP 440 sees it (wheel/build_tag.h encodes that): 13.0.
  wheel::Version wheel_release() const;

  std::strong_ordering operator<=>(const CudaVersion& other) const = default;
};

// Compares two texts that must both parse (the loader checked them).
std::strong_ordering compare_versions(std::string_view a, std::string_view b);
bool version_less(std::string_view a, std::string_view b);

// "3.12" -> "312", "13.0" -> "130": the digits, without dots.
std::string version_digits(std::string_view text);

}  // namespace sb::matrix
