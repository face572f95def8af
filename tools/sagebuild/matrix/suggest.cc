#include "sagebuild/matrix/suggest.h"

#include <algorithm>

namespace sb::matrix {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& choices) {
  // A dropped suffix ("2.8" for "2.8.0", "arch" for "archs") is the likeliest slip.
  for (const auto& choice : choices)
    if (word.size() >= 2 && (choice.starts_with(word) || word.starts_with(choice))) return choice;
  // Otherwise a few typos; short words get one, so "13.0" does not suggest "12.6".
  std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& choice : choices) {
    std::size_t d = edit_distance(word, choice);
    if (d < best_distance) {
      best_distance = d;
      best = choice;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& choices) {
  auto best = closest(word, choices);
  return best ? " (did you mean '" + *best + "'?)" : std::string();
}

}  // namespace sb::matrix
