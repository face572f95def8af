// JSON from files sagebuild does not trust (a wheel's build_info.json, the
// --previous manifest) is bounded before nlohmann parses it: nlohmann's copy
// and dump recurse once per nesting level, so 400k levels in a 1.8 KB file
// overflow the stack, and each level's indentation makes a dump grow with the
// square of the depth.  One bound for verify and index alike.
#pragma once

#include <cstddef>
#include <string_view>

namespace sb {

// The deepest nesting our own files have is 4 in build_info.json
// (kernel_families.<name>.archs) and 7 in a manifest (the same under
// wheels[i].build_info); the bound leaves room for fields we do not write.
inline constexpr std::size_t kMaxJsonDepth = 32;

// The nesting depth of `text` read as JSON ('[' and '{' outside strings),
// counted up to `limit` + 1: a result above `limit` means "too deep".
// Linear, no recursion; malformed text is counted as far as it goes (the
// parser then rejects it).
std::size_t json_depth(std::string_view text, std::size_t limit = kMaxJsonDepth);

}  // namespace sb
