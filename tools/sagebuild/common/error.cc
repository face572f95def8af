#include "sagebuild/common/error.h"

namespace sb {

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
  }
  return s;
}

ConfigError::ConfigError(SourceLocation where, const std::string& message)
    : std::runtime_error(where.str() + ": error: " + message), where_(std::move(where)), bare_(message) {}

}  // namespace sb
