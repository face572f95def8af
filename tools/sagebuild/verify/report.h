// What `sagebuild verify` says about one wheel, and how it is printed:
// a human block (one line per finding, then a one-line summary) or JSON.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sagebuild/common/finding.h"
#include "sagebuild/common/text.h"
#include "sagebuild/wheel/explain.h"

namespace sb::verify {

struct Report {
  std::filesystem::path path;
  Findings findings;
  std::uint64_t hashed_bytes = 0;  // member bytes streamed through the RECORD digests
  bool has_build_info = false;     // our build_info.json was found (B rules ran)
  // What the wheel is, part by part: its name decoded (wheel/explain.h), then
  // what build_info.json adds (archs, kernel families; torch and CUDA when
  // the name has neither).  Printed for a wheel that passes.
  std::vector<wheel::Part> components;
  std::vector<std::string> component_notes;

  std::size_t count(Severity s) const;
  // Default: Error and Strict fail.  Lenient: only Error does.
  bool failed(bool lenient) const;
};

// "wheel.whl: R5 error [pkg/x.py]: found ...; expected ..." lines, then
// "wheel.whl: FAIL (2 errors, 1 strict, 3 warnings)"; for a wheel that
// passes, its components after the summary, one "  [ok] PyTorch version tag:
// 280 (2.8.0)" line each, with `marks`.
std::string format_human(const Report& r, bool lenient, const Marks& marks = kAsciiMarks);
nlohmann::json to_json(const Report& r, bool lenient);

// The component lines alone (`sagebuild explain` prints them too), each
// value escaped (printable); "  note: ..." lines after them.
std::string format_components(const std::vector<wheel::Part>& parts, const std::vector<std::string>& notes,
                              const Marks& marks);
nlohmann::json components_json(const std::vector<wheel::Part>& parts, const std::vector<std::string>& notes);

}  // namespace sb::verify
