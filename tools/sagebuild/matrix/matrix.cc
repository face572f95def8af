#include "sagebuild/matrix/matrix.h"

#include "sagebuild/matrix/profile.h"
#include "sagebuild/matrix/suggest.h"

namespace sb::matrix {

std::string_view to_string(NamingScheme scheme) {
  return scheme == NamingScheme::build_tag ? "build-tag" : "local-version";
}

std::string Row::python_span() const {
  if (pythons.size() == 1) return pythons.front().str();
  return pythons.front().str() + "-" + pythons.back().str();
}

std::vector<std::string> profile_names(const Matrix& matrix) {
  std::vector<std::string> names;
  for (const auto& p : matrix.profiles) names.push_back(p.name);
  return names;
}

Plan expand(const Matrix& matrix, std::string_view profile) {
  for (const auto& p : matrix.profiles)
    if (p.name == profile) return Plan{p.name, select_rows(matrix, p)};
  std::vector<std::string> names = profile_names(matrix);
  throw ConfigError(SourceLocation{matrix.path.string()}, "unknown profile '" + std::string(profile) + "'" +
                                                              did_you_mean(profile, names) +
                                                              "; valid profiles: " + join(names));
}

const Row* find_row(const Matrix& matrix, std::string_view id) {
  for (const auto& row : matrix.rows)
    if (row.id == id) return &row;
  return nullptr;
}

}  // namespace sb::matrix
