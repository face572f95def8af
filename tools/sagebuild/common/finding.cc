#include "sagebuild/common/finding.h"

namespace sb {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::Warning: return "warning";
    case Severity::Strict: return "strict";
    case Severity::Error: return "error";
  }
  return "error";
}

char severity_letter(Severity s) {
  switch (s) {
    case Severity::Warning: return 'W';
    case Severity::Strict: return 'S';
    case Severity::Error: return 'E';
  }
  return 'E';
}

}  // namespace sb
