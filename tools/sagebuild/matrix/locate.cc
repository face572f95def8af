#include "sagebuild/matrix/locate.h"

#include <system_error>

namespace sb::matrix {

std::optional<std::filesystem::path> find_matrix_file(const std::filesystem::path& start) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(start, ec);
  if (ec) return std::nullopt;
  while (true) {
    std::filesystem::path candidate = dir / kDefaultMatrixPath;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    if (!dir.has_parent_path() || dir.parent_path() == dir) return std::nullopt;
    dir = dir.parent_path();
  }
}

}  // namespace sb::matrix
