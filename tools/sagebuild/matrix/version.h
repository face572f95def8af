// Dotted release numbers as the matrix writes them: "3.12", "12.8", "2.11.0",
// compared numerically, and the version types built on them, one per concept
// (CUDA, torch, Python), each parsed once where its text enters.  PEP 440
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

// A PyTorch release: as the matrix names it ("2.11.0"; a minimum or a
// stable-ABI target may stop at the minor, "2.10"), or the public part of an
// installed torch's version ("2.12.1+cu130" -> 2.12.1).  Read into numbers
// once where it enters (the matrix's YAML, families.json, torch/version.py)
// and passed as this afterwards.
struct TorchVersion {
  int major = 0, minor = 0, patch = 0;
  bool has_patch = false;  // written with its patch ("2.11.0") or without ("2.10")

  // "2.11.0" or "2.10", each part as DottedVersion::parse accepts it; nullopt
  // otherwise ("2", "2.11.0.1", "2.11.0+cu130").
  static std::optional<TorchVersion> parse(std::string_view text);
  // torch.__version__: a release as parse() takes it, then an optional local
  // label ("+cu130"), which is dropped; nullopt otherwise.
  static std::optional<TorchVersion> parse_installed(std::string_view text);

  TorchVersion minor_release() const { return {major, minor, 0, false}; }  // 2.12.1 -> 2.12
  std::string str() const;                                                 // as written: "2.11.0", "2.10"
  // The release as PEP 440 sees it, its parts as written (wheel/build_tag.h).
  wheel::Version wheel_release() const;

  // A release without its patch is its .0: 2.10 == 2.10.0 < 2.10.1.
  std::strong_ordering operator<=>(const TorchVersion& other) const;
  bool operator==(const TorchVersion& other) const { return (*this <=> other) == 0; }
};

// A Python (CPython) release, major.minor: "3.12".
struct PythonVersion {
  int major = 0, minor = 0;

  // "3.12", each part as DottedVersion::parse accepts it; nullopt otherwise.
  static std::optional<PythonVersion> parse(std::string_view text);

  std::string str() const;    // "3.12"
  std::string nodot() const;  // "312", as wheel tags write it (cp312)

  std::strong_ordering operator<=>(const PythonVersion& other) const = default;
};

}  // namespace sb::matrix
