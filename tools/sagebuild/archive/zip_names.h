// Member-name rules (docs/verify-rules.md: Z3 duplicates, Z6 names): what an installer
// would turn into a path must be unambiguous and stay inside the target.
#pragma once

#include <string_view>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/common/finding.h"
#include "sagebuild/common/text.h"

namespace sb::zip {

using sb::is_valid_utf8;  // strict RFC 3629 (common/text.h)

// Z6 for one name.  `utf8_flag` is general-purpose bit 11: without it,
// APPNOTE says the name is CP437, which decodes differently from UTF-8
// for any non-ASCII byte.
void check_member_name(std::string_view name, bool utf8_flag, Findings& out);

// Z3 exact duplicates (E) and Z6 case-insensitive collisions (W) across
// the central directory.
void check_name_collisions(const std::vector<Entry>& entries, Findings& out);

}  // namespace sb::zip
