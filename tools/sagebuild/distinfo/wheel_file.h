// The .dist-info/WHEEL file (BDF): checks W1-W6 and the writer for ours.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/finding.h"

namespace sb::distinfo {

// What the file name says, to compare WHEEL against.
struct WheelFileExpectations {
  std::vector<std::string> tags;         // the file name's tag set, expanded ("cp39-abi3-linux_x86_64")
  std::optional<std::string> build_tag;  // the file name's build tag, if any
};

// What WHEEL says (for the layout checks: D5, D10).
struct WheelFileInfo {
  std::optional<bool> root_is_purelib;  // set only for exactly "true"/"false"
  std::vector<std::string> tags;
  std::optional<std::string> build;
  std::string wheel_version;
};

// W1-W6.  `text` is the raw member content; `member` names it in findings.
Findings check_wheel_file(std::string_view text, std::string_view member, const WheelFileExpectations& expected,
                          WheelFileInfo* info = nullptr);

struct WheelFileSpec {
  std::string generator = "sagebuild 0.1.0";
  bool root_is_purelib = false;
  std::vector<std::string> tags;  // expanded, one Tag line each
  std::optional<std::string> build_tag;
};

// Wheel-Version: 1.0, Generator, Root-Is-Purelib, Tag..., Build (when set).
std::string write_wheel_file(const WheelFileSpec& spec);

}  // namespace sb::distinfo
