// SITE/manifest.json: every wheel with its variant, digest and the
// build_info.json it ships, for tools and for auditing a release.
#pragma once

#include <string>
#include <vector>

#include "sagebuild/index/variant.h"

namespace sb::index {

// {"variants":[{"name","torch","cuda","index"}],
//  "wheels":[{"filename","url","project","version","variant","torch","cuda",
//             "sha256","size","requires_python","build_info"}]}
// A wheel's "url" is `wheels_href` + its file name: "wheels/" (relative to
// the site root) or an absolute URL.  Deterministic: same input, same bytes.
std::string render_manifest(const std::vector<VariantGroup>& groups, const std::string& wheels_href = "wheels/");

}  // namespace sb::index
