// The PEP 503 (HTML) form of the simple repository API, as static pages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/index/model.h"

namespace sb::index {

// Escapes & < > " ' for use in text and in double-quoted attributes.
std::string html_escape(std::string_view text);

// <variant>/simple/index.html: one link per project, to "<project>/".
std::string render_project_list_html(const std::vector<std::string>& projects);

// <variant>/simple/<project>/index.html: one link per wheel to
// `<wheels_href><file>#sha256=<hex>`, with data-requires-python when known.
// `wheels_href` is relative to the page (the site puts it at "../../../wheels/").
std::string render_project_page_html(std::string_view project, const std::vector<IndexedWheel>& wheels,
                                     std::string_view wheels_href);

// Where a wheel is served: its own url when it has one (a previous
// release's asset), else `wheels_href` + the URL-escaped file name.
std::string wheel_url(std::string_view wheels_href, const IndexedWheel& wheel);
// wheel_url with the sha256 fragment, for the HTML pages.
std::string wheel_href(std::string_view wheels_href, const IndexedWheel& wheel);

// Percent-encodes what is not an unreserved URL character or one of the
// characters wheel file names use ("+" of local versions included).
std::string url_escape_path_segment(std::string_view segment);

}  // namespace sb::index
