#include "sagebuild/index/command.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "sagebuild/common/fs.h"
#include "sagebuild/index/previous.h"
#include "sagebuild/index/site.h"
#include "sagebuild/index/urls.h"
#include "sagebuild/index/variant.h"
#include "sagebuild/index/wheel_scan.h"

namespace sb::index {

namespace {

struct Options {
  std::string dir;
  std::string out;
  std::string base_url;
  std::string wheels_url;
  std::string previous;
};

// Without --base-url the landing page's commands point at the site where it
// was written, which is right for a local index (file://).
std::string default_base_url(const std::string& out) {
  std::string path = std::filesystem::absolute(out).lexically_normal().generic_string();
  // Percent-encoded where a URL on the site must not hold the character
  // (urls.h): "/tmp/my site" is file:///tmp/my%20site.
  std::string encoded;
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("-._~/:@+,=").find(static_cast<char>(c)) != std::string_view::npos) {
      encoded += static_cast<char>(c);
    } else {
      encoded += '%';
      encoded += hex[c >> 4];
      encoded += hex[c & 15];
    }
  }
  // file:///C:/site on Windows: the path after "file://" must start with '/'.
  return (encoded.starts_with("/") ? "file://" : "file:///") + encoded;
}

void run(const Options& o, sb::cli::Context& ctx) {
  check_output_dir(o.out, "--out");
  if (!o.base_url.empty()) check_url_option("--base-url", o.base_url, UrlForm::absolute);
  if (!o.wheels_url.empty()) check_url_option("--wheels-url", o.wheels_url, UrlForm::absolute_or_relative);
  // The operator's small inputs first: a bad --previous fails before the scan.
  std::vector<IndexedWheel> previous;
  if (!o.previous.empty()) previous = read_previous_manifest(o.previous);
  auto indexed = scan_directory(o.dir);
  std::size_t fresh = indexed.size();
  if (!o.previous.empty()) indexed = merge_previous(std::move(indexed), std::move(previous));
  check_distinct_files(indexed);
  auto groups = group_by_variant(std::move(indexed));
  SiteOptions site{o.base_url.empty() ? default_base_url(o.out) : o.base_url, o.wheels_url};
  if (!site.wheels_url.empty() && site.wheels_url.back() != '/') site.wheels_url += '/';
  write_site(groups, o.out, site);
  std::size_t wheels = 0;
  for (const auto& g : groups) wheels += g.wheels.size();
  std::printf("indexed %zu wheel(s) (%zu new, %zu from the previous index) in %zu variant(s) into %s\n", wheels, fresh,
              wheels - fresh, groups.size(), o.out.c_str());
  for (const auto& g : groups) std::printf("  %s: %zu wheel(s)\n", g.name.c_str(), g.wheels.size());
  ctx.exit_code = 0;
}

}  // namespace

void add_index_command(CLI::App& app, sb::cli::Context& ctx) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("index", "Write a static package index (PEP 503 + PEP 691) per torch x CUDA variant");
  sub->add_option("dir", opts->dir, "Directory holding the built wheels (searched recursively)")->required();
  sub->add_option("--out", opts->out, "Site directory to write (replaced atomically)")->required();
  sub->add_option("--base-url", opts->base_url,
                  "URL the site will be served from, for the pip commands on the landing page");
  sub->add_option("--wheels-url", opts->wheels_url,
                  "Link wheels at this URL (e.g. a GitHub release's download URL) instead of "
                  "copying them into SITE/wheels/");
  sub->add_option("--previous", opts->previous,
                  "The manifest.json of the site this one replaces: its wheels stay in the index, linked "
                  "where they are served (a release keeps every earlier version)");
  sub->callback([opts, &ctx] { run(*opts, ctx); });
}

}  // namespace sb::index
