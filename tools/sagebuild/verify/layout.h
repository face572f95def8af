// The wheel's directory layout (docs/verify-rules.md D1-D10): one .dist-info with the
// right name, .data schemes, and the lint-level warnings about contents.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sagebuild/common/finding.h"
#include "sagebuild/wheel/filename.h"

namespace sb::verify {

struct Layout {
  std::string dist_info;                  // "<name>-<ver>.dist-info", empty if none usable
  std::string data_dir;                   // "<name>-<ver>.data", empty if none
  std::vector<std::string> data_scripts;  // file names under .data/scripts/
  bool has_native_code = false;           // .so / .pyd / .dylib anywhere
};

// D1-D4, D6-D9 from the member names (directories included) and the file name.
Layout check_layout(const std::vector<std::string>& members, const wheel::WheelFilename* filename, Findings& out);

// D5 and D10, which need WHEEL's Root-Is-Purelib and the platform tags.
void check_purelib_layout(const Layout& layout, const std::vector<std::string>& members,
                          std::optional<bool> root_is_purelib, const wheel::WheelFilename* filename, Findings& out);

bool is_native_library(std::string_view member);  // .so (incl. .so.N), .pyd, .dll, .dylib
// A file pip installs into the environment's scripts directory
// (<name>-<version>.data/scripts/...): a native executable there is read
// and judged like a library (a tool wheel such as sagebuild's own).
bool is_installed_script(std::string_view member);

}  // namespace sb::verify
