// What the index harnesses check of a site rendered from hostile input:
// every page stays inside the site, and the landing page's commands hold no
// shell text (index/urls.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sagebuild/common/text.h"
#include "sagebuild/fuzz/fuzz.h"
#include "sagebuild/index/site.h"
#include "sagebuild/index/variant.h"

namespace sb::fuzz {

inline void check_site(std::vector<index::IndexedWheel> wheels) {
  auto groups = index::group_by_variant(std::move(wheels));
  auto pages = index::render_site_pages(groups, {"https://example.org/sage", "https://example.org/dl/"});
  for (const auto& page : pages) {
    const std::string& p = page.path;
    if (p.empty() || p.front() == '/' || p.find('\\') != std::string::npos || p.find("..") != std::string::npos)
      broken("a page path leaves the site");
    if (!is_valid_utf8(page.content)) broken("a page is not UTF-8");
    if (p.ends_with(".json") && nlohmann::json::parse(page.content, nullptr, false).is_discarded())
      broken("a JSON page does not parse");
    if (p != "index.html") continue;
    // "pip install PROJECT --extra-index-url URL": a project of [a-z0-9._-].
    const std::string cmd = "pip install ";
    for (auto at = page.content.find(cmd); at != std::string::npos; at = page.content.find(cmd, at + 1)) {
      std::size_t b = at + cmd.size(), e = page.content.find(" --extra-index-url ", b);
      if (e == std::string::npos) broken("a landing-page command without its index URL");
      if (page.content.substr(b, e - b).find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._-") !=
          std::string::npos)
        broken("shell text in a landing-page command");
    }
  }
}

}  // namespace sb::fuzz
