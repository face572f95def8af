// The PEP 691 (JSON) form of the simple repository API, api-version 1.1
// (PEP 700: "versions" per project and "size" per file are then required).
// Static hosting cannot negotiate content types, so these are served as
// index.json beside each index.html.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/index/model.h"

namespace sb::index {

inline constexpr const char* kSimpleApiVersion = "1.1";

// {"meta":{"api-version":"1.1"},"projects":[{"name":...}]}
std::string render_project_list_json(const std::vector<std::string>& projects);

// {"meta":..., "name":..., "versions":[...], "files":[{"filename","url",
//  "hashes":{"sha256"}, "requires-python" (when known), "size"}]}
// "url" is relative to the page, like the HTML form's href.
std::string render_project_page_json(std::string_view project, const std::vector<IndexedWheel>& wheels,
                                     std::string_view wheels_href);

}  // namespace sb::index
