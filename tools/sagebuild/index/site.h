// The site's layout and its atomic publication:
//
//   SITE/index.html                          landing page (landing.h)
//   SITE/manifest.json                       every wheel (manifest.h)
//   SITE/wheels/<file>.whl                   the wheels, one copy each
//   SITE/<variant>/simple/index.html|json    project list (PEP 503 / 691)
//   SITE/<variant>/simple/<project>/index.html|json
//
// Everything is written into a temporary sibling directory first and moved
// into place only when complete, so a failed run never leaves a half index
// that pip would read.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sagebuild/index/variant.h"

namespace sb::index {

struct SitePage {
  std::string path;     // relative to SITE, '/'-separated
  std::string content;
};

// From a project page to SITE/wheels/.
inline constexpr const char* kWheelsHref = "../../../wheels/";

// Every generated page (not the wheels), in a fixed order.
std::vector<SitePage> render_site_pages(const std::vector<VariantGroup>& groups,
                                        const std::string& base_url);

// Writes pages and copies wheels into a temporary directory beside `out`,
// then replaces `out` with it.  An existing `out` is replaced only when it is
// empty or a previous site (has manifest.json); otherwise throws
// sb::UsageError rather than delete someone's directory.  Throws sb::IoError
// on file-system failures, leaving `out` as it was.
void write_site(const std::vector<VariantGroup>& groups, const std::filesystem::path& out,
                const std::string& base_url);

}  // namespace sb::index
