#include "sagebuild/verify/layout.h"

#include <algorithm>
#include <set>

#include "sagebuild/common/text.h"
#include "sagebuild/wheel/names.h"

namespace sb::verify {

namespace {

std::string_view top_component(std::string_view member) { return member.substr(0, member.find('/')); }

std::string basename(std::string_view member) {
  auto slash = member.rfind('/');
  return std::string(slash == std::string_view::npos ? member : member.substr(slash + 1));
}

// "Fancy-1.0.0.dist-info" -> {"Fancy", "1.0.0"} (the name part has no '-' when escaped).
std::pair<std::string, std::string> split_stem(std::string_view dir, std::string_view suffix) {
  std::string_view stem = dir.substr(0, dir.size() - suffix.size());
  auto dash = stem.find('-');
  if (dash == std::string_view::npos) return {std::string(stem), ""};
  return {std::string(stem.substr(0, dash)), std::string(stem.substr(dash + 1))};
}

void check_dist_info_name(const std::string& dir, const wheel::WheelFilename& fn, Findings& out) {
  auto [name, version] = split_stem(dir, ".dist-info");
  if (!wheel::same_project(name, fn.name)) {
    add(out, "D2", Severity::Error, dir, clip(dir) + " does not match the file name's project '" + fn.name + "'",
        wheel::wheel_escape_name(fn.name) + "-" + fn.version.str() + ".dist-info");
    return;
  }
  std::string want = wheel::wheel_escape_name(fn.name) + "-" + fn.version.str() + ".dist-info";
  if (dir != want) add(out, "D2", Severity::Warning, dir, clip(dir) + " is not the normalized dist-info name", want);
}

// D3 for one .data directory's name.
void check_data_dir_name(const std::string& dir, const std::string& dist_info, Findings& out) {
  std::string stem = dir.substr(0, dir.size() - 5);
  if (!dist_info.empty() && stem + ".dist-info" != dist_info)
    add(out, "D3", Severity::Error, clip(dir), clip(dir) + " does not share the stem of " + dist_info,
        dist_info.substr(0, dist_info.size() - 10) + ".data");
}

// D3 for a file `m` inside the .data directory `dir`: it must sit under a scheme.
void check_data_member(std::string_view dir, const std::string& m, Layout& layout, Findings& out) {
  if (m.back() == '/') return;
  std::string rest = m.substr(dir.size() + 1);
  auto slash = rest.find('/');
  std::string scheme = slash == std::string::npos ? "" : rest.substr(0, slash);
  static const std::set<std::string> schemes = {"purelib", "platlib", "headers", "scripts", "data"};
  if (!schemes.count(scheme))
    add(out, "D3", Severity::Error, m,
        slash == std::string::npos ? "file directly under " + clip(dir) + "/"
                                   : "unknown .data scheme '" + clip(scheme) + "' (pip: Unknown scheme key)",
        "one of purelib, platlib, headers, scripts, data");
  else if (scheme == "scripts")
    layout.data_scripts.push_back(basename(m));
}

void check_contents(const std::vector<std::string>& members, const std::string& dist_info, Findings& out) {
  static const std::set<std::string> reserved = {"licenses", "license_files", "LICENSES", "sboms"};
  for (const auto& m : members) {
    std::string base = basename(m);
    if (m.ends_with(".pyc") || m.ends_with(".pyo") || m.find("__pycache__/") != std::string::npos)
      add(out, "D6", Severity::Warning, m, "compiled bytecode in the wheel", "sources only (installers compile)");
    if (dist_info.empty() || m.compare(0, dist_info.size() + 1, dist_info + "/") != 0) continue;
    std::string rest = m.substr(dist_info.size() + 1);
    if (rest == "INSTALLER" || rest == "REQUESTED" || rest == "direct_url.json")
      add(out, "D7", Severity::Warning, m, rest + " is written by installers, not shipped in wheels", "");
    if (rest == "RECORD.jws" || rest == "RECORD.p7s")
      add(out, "D9", Severity::Warning, m, rest + " is deprecated (PEP 815)", "no RECORD signature files");
    auto slash = rest.find('/');
    if (slash != std::string::npos && m.back() != '/' && !reserved.count(rest.substr(0, slash)))
      add(out, "D8", Severity::Warning, m, "subdirectory '" + clip(rest.substr(0, slash)) + "' of the .dist-info",
          "only the reserved licenses/, license_files/, LICENSES/, sboms/");
  }
}

}  // namespace

bool is_native_library(std::string_view m) {
  std::string b = basename(m);
  return b.ends_with(".so") || b.find(".so.") != std::string::npos || b.ends_with(".pyd") || b.ends_with(".dll") ||
         b.ends_with(".dylib");
}

bool is_installed_script(std::string_view m) {
  auto slash = m.find('/');
  if (slash == std::string_view::npos || !m.substr(0, slash).ends_with(".data")) return false;
  std::string_view rest = m.substr(slash + 1);
  return rest.rfind("scripts/", 0) == 0 && rest.size() > 8 && rest.back() != '/';
}

Layout check_layout(const std::vector<std::string>& members, const wheel::WheelFilename* fn, Findings& out) {
  Layout layout;
  std::set<std::string> dist_infos, datas;
  for (const auto& m : members) {
    if (is_native_library(m)) layout.has_native_code = true;
    if (m.find('/') == std::string::npos) continue;  // a top-level file is not a directory
    std::string top(top_component(m));
    if (top.ends_with(".dist-info")) dist_infos.insert(top);
    if (top.ends_with(".data")) datas.insert(top);
  }
  if (dist_infos.size() != 1) {
    std::string found;
    std::size_t listed = 0;
    for (const auto& d : dist_infos)
      if (listed++ < 5) found += (found.empty() ? "" : ", ") + clip(d);
    if (listed > 5) found += " and " + std::to_string(listed - 5) + " more";
    add(out, "D1", Severity::Error, "",
        "found " + std::to_string(dist_infos.size()) + " top-level .dist-info directories" +
            (found.empty() ? "" : " (" + found + ")"),
        "exactly one <name>-<version>.dist-info");
  }
  if (dist_infos.size() == 1) {
    layout.dist_info = *dist_infos.begin();
    if (fn) check_dist_info_name(layout.dist_info, *fn, out);
  }
  if (datas.size() > 1)
    add(out, "D3", Severity::Error, "", std::to_string(datas.size()) + " top-level .data directories", "at most one");
  for (const auto& d : datas) check_data_dir_name(d, layout.dist_info, out);
  // One pass over the members, not one per .data directory: a hostile wheel
  // has 20,000 of them.
  for (const auto& m : members) {
    auto slash = m.find('/');
    if (slash != std::string::npos && datas.count(m.substr(0, slash)))
      check_data_member(top_component(m), m, layout, out);
  }
  if (datas.size() == 1) layout.data_dir = *datas.begin();
  check_contents(members, layout.dist_info, out);
  return layout;
}

void check_purelib_layout(const Layout& layout, const std::vector<std::string>& members,
                          std::optional<bool> root_is_purelib, const wheel::WheelFilename* fn, Findings& out) {
  if (!layout.data_dir.empty() && root_is_purelib) {
    std::string redundant = layout.data_dir + (*root_is_purelib ? "/purelib/" : "/platlib/");
    for (const auto& m : members)
      if (m.compare(0, redundant.size(), redundant) == 0) {
        add(out, "D5", Severity::Warning, m,
            "Root-Is-Purelib: " + std::string(*root_is_purelib ? "true" : "false") + " with files under " + redundant,
            "files at the root instead");
        break;
      }
  }
  bool any_platform =
      fn && std::find(fn->platform_tags.begin(), fn->platform_tags.end(), "any") != fn->platform_tags.end();
  if (!layout.has_native_code || !(any_platform || root_is_purelib.value_or(false))) return;
  for (const auto& m : members)
    if (is_native_library(m)) {
      add(out, "D10", Severity::Warning, m,
          "native library in a wheel tagged " + std::string(any_platform ? "'any'" : "Root-Is-Purelib: true"),
          "a platform tag and Root-Is-Purelib: false");
      break;
    }
}

}  // namespace sb::verify
