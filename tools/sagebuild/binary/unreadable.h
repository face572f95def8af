// The finding of a binary that cannot be read as the format it claims
// (P8): what the ELF and PE readers report before they give up on a file.
#pragma once

#include <string>
#include <utility>

#include "sagebuild/common/finding.h"

namespace sb::binary {

inline void unreadable(Findings& out, std::string msg, std::string expected = {}) {
  add(out, "P8", Severity::Error, "", std::move(msg), std::move(expected));
}

}  // namespace sb::binary
