#include "sagebuild/index/site.h"

#include <random>
#include <system_error>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/index/html.h"
#include "sagebuild/index/landing.h"
#include "sagebuild/index/manifest.h"
#include "sagebuild/index/simple_json.h"
#include "sagebuild/index/urls.h"

namespace fs = std::filesystem;

namespace sb::index {

namespace {

std::vector<IndexedWheel> wheels_of(const VariantGroup& g, const std::string& project) {
  std::vector<IndexedWheel> out;
  for (const auto& w : g.wheels) {
    if (w.project == project) out.push_back(w);
  }
  return out;
}

void add_variant_pages(const VariantGroup& g, const std::string& wheels_href, std::vector<SitePage>& pages) {
  std::string simple = g.name + "/simple/";
  auto projects = projects_of(g);
  pages.push_back({simple + "index.html", render_project_list_html(projects)});
  pages.push_back({simple + "index.json", render_project_list_json(projects)});
  for (const auto& p : projects) {
    auto wheels = wheels_of(g, p);
    pages.push_back({simple + p + "/index.html", render_project_page_html(p, wheels, wheels_href)});
    pages.push_back({simple + p + "/index.json", render_project_page_json(p, wheels, wheels_href)});
  }
}

// A suffix no concurrent run picks: common/fs.h keeps its pid-based naming
// private, and a random token avoids OS-specific process ids here.
std::string unique_suffix() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 4; ++i) {
    unsigned v = rd();
    for (int k = 0; k < 4; ++k) s += hex[(v >> (4 * k)) & 0xf];
  }
  return s;
}

// Removes a directory tree when the scope ends unless released.
class TreeGuard {
 public:
  explicit TreeGuard(fs::path p) : path_(std::move(p)) {}
  ~TreeGuard() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

void check_replaceable(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec)) {
    throw UsageError("--out " + out.string() +
                     " exists and is not a directory; expected a "
                     "directory for the site (or a path that does not exist yet)");
  }
  if (fs::is_empty(out, ec) || fs::is_regular_file(fs::symlink_status(out / kSiteMarker, ec))) return;
  throw UsageError("--out " + out.string() + " is a non-empty directory without " + kSiteMarker +
                   ", the marker every site `sagebuild index` writes carries, so sagebuild did not write it; "
                   "refusing to replace it. Expected an empty directory, a previous `sagebuild index` output, "
                   "or a new path (a site an older sagebuild wrote has no marker: remove it yourself)");
}

void copy_wheels(const std::vector<VariantGroup>& groups, const fs::path& wheels_dir) {
  for (const auto& g : groups) {
    for (const auto& w : g.wheels) {
      if (w.source.empty()) continue;  // a previous release's wheel, served from its url
      // File names are unique: scan_directory merged identical copies and
      // refused different files of one name.
      fs::path dest = wheels_dir / w.filename;
      std::error_code ec;
      fs::copy_file(w.source, dest, ec);
      if (ec) throw IoError("cannot copy " + w.source.string() + " to " + dest.string() + ": " + ec.message());
    }
  }
}

// Moves `staged` to `out`, moving a previous site out of the way first.
void swap_into_place(const fs::path& staged, const fs::path& out) {
  std::error_code ec;
  fs::path old;
  if (fs::exists(out, ec)) {
    old = out.parent_path() / ("." + out.filename().string() + ".old-" + unique_suffix());
    fs::rename(out, old, ec);
    if (ec) throw IoError("cannot move the previous site " + out.string() + " aside: " + ec.message());
  }
  fs::rename(staged, out, ec);
  if (ec) {
    std::error_code restore;
    if (!old.empty()) fs::rename(old, out, restore);
    throw IoError("cannot move the new site into " + out.string() + ": " + ec.message());
  }
  if (!old.empty()) fs::remove_all(old, ec);
}

}  // namespace

std::vector<SitePage> render_site_pages(const std::vector<VariantGroup>& groups, const SiteOptions& options) {
  // Each becomes a directory: checked here, whatever the wheels or a previous
  // manifest said (previous.h, wheel_scan.h check them first).
  for (const auto& g : groups) {
    check_path_component(g.name, "variant");
    for (const auto& p : projects_of(g)) check_path_component(p, "project");
  }
  bool external = !options.wheels_url.empty();
  std::vector<SitePage> pages;
  pages.push_back({"index.html", render_landing_page(groups, options.base_url)});
  pages.push_back({"manifest.json", render_manifest(groups, external ? options.wheels_url : "wheels/")});
  for (const auto& g : groups) add_variant_pages(g, external ? options.wheels_url : kWheelsHref, pages);
  return pages;
}

void write_site(const std::vector<VariantGroup>& groups, const fs::path& out_arg, const SiteOptions& options) {
  fs::path out = fs::absolute(out_arg).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  check_replaceable(out);
  std::error_code ec;
  fs::create_directories(out.parent_path(), ec);
  fs::path staged = out.parent_path() / ("." + out.filename().string() + ".tmp-" + unique_suffix());
  // A fresh name: create_directory fails rather than reuse anything there.
  if (!fs::create_directory(staged, ec) || ec)
    throw IoError("cannot create " + staged.string() + ": " + (ec ? ec.message() : "it exists"));
  TreeGuard guard(staged);
  write_file_atomic(staged / kSiteMarker, "written by sagebuild index; a later run may replace this directory\n");
  for (const auto& page : render_site_pages(groups, options)) {
    fs::path file = staged / fs::path(page.path);
    fs::create_directories(file.parent_path(), ec);
    write_file_atomic(file, page.content);
  }
  if (options.wheels_url.empty()) {
    fs::create_directories(staged / "wheels", ec);
    if (ec) throw IoError("cannot create " + (staged / "wheels").string() + ": " + ec.message());
    copy_wheels(groups, staged / "wheels");
  }
  swap_into_place(staged, out);
  guard.release();
}

}  // namespace sb::index
