// The wheels of the site being replaced: a release's index must keep every
// earlier version, yet the release job has only the new wheels at hand.  The
// previous site's manifest.json lists each wheel with its URL (a release
// asset), digest and build information, which is all the pages need.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "sagebuild/index/model.h"

namespace sb::index {

// The wheels of a manifest.json that `sagebuild index --wheels-url` wrote.
// Each keeps its absolute url.  Throws sb::UsageError naming the file and
// the entry when the manifest is not one (bad JSON, a missing or mistyped
// field, a relative url: that site copied its wheels and its manifest cannot
// say where they are served).
std::vector<IndexedWheel> read_previous_manifest(const std::filesystem::path& file);
std::vector<IndexedWheel> parse_previous_manifest(std::string_view text, const std::string& source);

// `current` plus every previous wheel it does not replace, by file name.  A
// wheel in both must be the same file (same SHA-256): a published file never
// changes under its users.  Throws sb::UsageError naming it otherwise.
std::vector<IndexedWheel> merge_previous(std::vector<IndexedWheel> current, std::vector<IndexedWheel> previous);

}  // namespace sb::index
