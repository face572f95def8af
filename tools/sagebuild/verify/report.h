// What `sagebuild verify` says about one wheel, and how it is printed:
// a human block (one line per finding, then a one-line summary) or JSON.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sagebuild/common/finding.h"

namespace sb::verify {

struct Report {
  std::filesystem::path path;
  Findings findings;
  std::uint64_t hashed_bytes = 0;  // member bytes streamed through the RECORD digests
  bool has_build_info = false;     // our build_info.json was found (B rules ran)

  std::size_t count(Severity s) const;
  // Default: Error and Strict fail.  Lenient: only Error does.
  bool failed(bool lenient) const;
};

// "wheel.whl: R5 error [pkg/x.py]: found ...; expected ..." lines, then
// "wheel.whl: FAIL (2 errors, 1 strict, 3 warnings)".
std::string format_human(const Report& r, bool lenient);
nlohmann::json to_json(const Report& r, bool lenient);

}  // namespace sb::verify
