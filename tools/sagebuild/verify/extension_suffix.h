// P10 and P11 from member names alone: an extension module's suffix
// (".cpython-311-x86_64-linux-gnu.so", ".abi3.so", ".cp312-win_amd64.pyd")
// says which interpreter it was built for; it must agree with the tags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sagebuild/common/finding.h"
#include "sagebuild/wheel/filename.h"

namespace sb::verify {

// "cp311" for "m.cpython-311-x86_64-linux-gnu.so" / "m.cp311-win_amd64.pyd",
// "abi3" for "m.abi3.so", nullopt for other names (plain ".so", ".pyd").
std::optional<std::string> extension_interpreter(std::string_view member);

// P10: abi3 wheels ship no version-specific extension.  P11: version-specific
// extensions match a cpXY interpreter tag.
void check_extension_suffixes(const std::vector<std::string>& members, const wheel::WheelFilename& fn, Findings& out);

}  // namespace sb::verify
