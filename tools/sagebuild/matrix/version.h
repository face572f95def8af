// Dotted release numbers as the matrix writes them: "3.12", "12.8", "2.11.0".
// Only comparison is needed here (PEP 440 proper lives in wheel/pep440.h).
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// Compares two texts that must both parse (the loader checked them).
std::strong_ordering compare_versions(std::string_view a, std::string_view b);
bool version_less(std::string_view a, std::string_view b);

// "3.12" -> "312", "13.0" -> "130": the digits, without dots.
std::string version_digits(std::string_view text);

}  // namespace sb::matrix
