// The site's layout and its atomic publication:
//
//   SITE/index.html                          landing page (landing.h)
//   SITE/manifest.json                       every wheel (manifest.h)
//   SITE/wheels/<file>.whl                   the wheels, one copy each (unless
//                                            they are served elsewhere: wheels_url)
//   SITE/<variant>/simple/index.html|json    project list (PEP 503 / 691)
//   SITE/<variant>/simple/<project>/index.html|json
//
//   SITE/.sagebuild-site                     the marker: sagebuild wrote this site
//
// Everything is written into a temporary sibling directory first and moved
// into place only when complete, so a failed run never leaves a half index
// that pip would read.  An existing SITE is replaced only when it is empty or
// carries the marker: nothing sagebuild did not write is ever deleted.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sagebuild/index/variant.h"

namespace sb::index {

struct SitePage {
  std::string path;  // relative to SITE, '/'-separated
  std::string content;
};

// The file every site holds, so a later run knows it may replace it.
inline constexpr const char* kSiteMarker = ".sagebuild-site";

// From a project page to SITE/wheels/.
inline constexpr const char* kWheelsHref = "../../../wheels/";

struct SiteOptions {
  // Where the site will be served from (the landing page's pip commands).
  std::string base_url;
  // Where the wheels are served from, ending in '/', when not from the site
  // itself (a GitHub release's assets: a Pages site is limited to 1 GB).
  // Empty: wheels are copied to SITE/wheels/ and linked relatively.
  std::string wheels_url;
};

// Every generated page (not the wheels), in a fixed order.
std::vector<SitePage> render_site_pages(const std::vector<VariantGroup>& groups, const SiteOptions& options);

// Writes pages (and copies the wheels unless options.wheels_url is set) into
// a temporary directory beside `out`,
// then replaces `out` with it.  An existing `out` is replaced only when it is
// empty or a previous site (has manifest.json); otherwise throws
// sb::UsageError rather than delete someone's directory.  Throws sb::IoError
// on file-system failures, leaving `out` as it was.
void write_site(const std::vector<VariantGroup>& groups, const std::filesystem::path& out, const SiteOptions& options);

}  // namespace sb::index
