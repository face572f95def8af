// "Did you mean ...?" for misspelt keys and names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::matrix {

// The choice `word` most plausibly misspells: one it is a prefix of (or that
// is a prefix of it), else the closest by edit distance within a third of the
// word's length (at least 1).
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& choices);

// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& choices);

}  // namespace sb::matrix
