// entry_points.txt (EP spec): an INI file with '=' as the only delimiter and
// case-sensitive keys.  Checks E1-E4 of docs/verify-rules.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/common/finding.h"

namespace sb::distinfo {

struct EntryPoint {
  std::string group;  // section, e.g. "console_scripts"
  std::string name;
  std::string value;  // "module:attr [extras]"
  int line = 0;
};

struct EntryPointsParse {
  std::vector<EntryPoint> entries;
  Findings findings;  // E1
};

// Entries past `max_entries` are counted in one E1 finding, not kept (a
// 10 MB file of "a=b" lines is four million of them).
EntryPointsParse parse_entry_points(std::string_view text, std::string_view member, std::size_t max_entries = 100'000);

// PyPI's rule: a script name fullmatches [\w.-]+ (\w in Python's Unicode sense).
bool is_pypi_script_name(std::string_view name);
// pip's rule: the script path, joined to the scripts directory, stays inside it
// ('.', '..', '../x', '/etc/x' do not).
bool script_name_stays_inside(std::string_view name);
// `module:attr[ [extras]]`; `require_attr` for console/gui scripts.
bool is_valid_entry_point_value(std::string_view value, bool require_attr);

// E2-E4 over the parsed entries.  `data_scripts` are the file names under
// `<name>.data/scripts/` (for E4's duplicate check).
Findings check_entry_points(const std::vector<EntryPoint>& entries, std::string_view member,
                            const std::vector<std::string>& data_scripts = {});

}  // namespace sb::distinfo
