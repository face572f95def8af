#include "sagebuild/plan/source_manifest.h"

#include <algorithm>
#include <cstdlib>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/text.h"
#include "sagebuild/matrix/yaml_reader.h"
#include "sagebuild/toolchain/provision.h"
#include "sagebuild/wheel/names.h"

namespace sb::plan {

namespace fs = std::filesystem;
using matrix::Located;
using matrix::YamlMap;
using matrix::YamlValue;

namespace {

std::vector<std::string> strings(const YamlMap& map, std::string_view key) {
  std::vector<std::string> out;
  if (auto value = map.get(key))
    for (const Located& item : value->scalar_list()) {
      if (item.text.empty()) throw ConfigError(item.where, "an empty entry in " + value->what());
      out.push_back(item.text);
    }
  return out;
}

// A path inside the checkout: relative, no "..", forward slashes.
std::string tree_path(const Located& p, const std::string& what) {
  fs::path path(p.text);
  bool escapes = std::any_of(path.begin(), path.end(), [](const fs::path& part) { return part == ".."; });
  if (p.text.empty() || path.is_absolute() || escapes || p.text.find('\\') != std::string::npos)
    throw ConfigError(p.where, what + " '" + clip(p.text, 120) +
                                   "' is not a path inside the checkout; write it relative to the tree's top, "
                                   "with '/' and without '..', like \"csrc/fused/fused.cu\"");
  return p.text;
}

std::vector<std::string> tree_paths(const YamlMap& map, std::string_view key, const std::string& what) {
  std::vector<std::string> out;
  if (auto value = map.get(key))
    for (const Located& item : value->scalar_list()) out.push_back(tree_path(item, what));
  return out;
}

Arch arch_at(const Located& value) { return parse_arch_at(value.text, value.where); }

// Dotted Python identifiers: "sageattention._qattn_sm80", "fp4attn_cuda".
bool module_name(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  bool start = true;
  for (char c : s) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (c == '.') {
      if (start) return false;
      start = true;
    } else if (alpha || (digit && !start)) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

// Exactly one of min_arch (a floor) and archs (exact targets).
void read_targets(const YamlMap& map, SourceExtension& e) {
  auto min = map.get("min_arch");
  auto archs = map.get("archs");
  if (min && archs)
    throw ConfigError(archs->where(), "extension '" + e.module +
                                          "' gives both min_arch and archs; expected exactly one (min_arch: built "
                                          "for every row arch at or above it; archs: exactly these targets)");
  if (!min && !archs)
    map.self().fail("extension '" + e.module +
                    "' gives neither min_arch nor archs; expected exactly one, e.g. min_arch: \"8.0\" or "
                    "archs: [\"9.0a\"]");
  if (min) {
    e.min_arch = arch_at(min->scalar());
    return;
  }
  for (const Located& written : archs->scalar_list()) {
    Arch a = arch_at(written);
    if (contains_arch(e.archs, a))
      throw ConfigError(written.where, "arch " + a.name() + " is listed twice in extension '" + e.module + "'");
    e.archs.push_back(a);
  }
  if (e.archs.empty()) archs->fail("extension '" + e.module + "' lists no archs; expected targets such as [\"9.0a\"]");
}

SourceExtension parse_extension(const Located& name, const YamlValue& node) {
  YamlMap map = node.map({"sources", "min_arch", "archs", "symbol_marker", "libraries", "exports", "nvcc_flags",
                          "cxx_flags", "peak_memory_gib"});
  SourceExtension e;
  e.module = name.text;
  e.where = name.where;
  if (!module_name(e.module))
    throw ConfigError(name.where, "'" + clip(e.module, 120) +
                                      "' is not a module name; write the extension's dotted import name, like "
                                      "\"sageattention._fused\"");
  auto sources = map.required("sources");
  for (const Located& s : sources.scalar_list()) {
    std::string path = tree_path(s, "source");
    if (!path.ends_with(".cu") && !path.ends_with(".cpp") && !path.ends_with(".cc") && !path.ends_with(".cxx"))
      throw ConfigError(s.where, "source '" + clip(path, 120) +
                                     "' is neither CUDA (.cu, compiled by nvcc) nor C++ (.cpp, .cc, .cxx, compiled "
                                     "by the host compiler)");
    e.sources.push_back(path);
  }
  if (std::none_of(e.sources.begin(), e.sources.end(), [](const std::string& s) { return s.ends_with(".cu"); }))
    sources.fail("extension '" + e.module +
                 "' has no CUDA source (.cu): its archs and symbol_marker describe kernels it would not have");
  read_targets(map, e);
  e.symbol_marker = map.required("symbol_marker").scalar().text;
  if (e.symbol_marker.empty())
    map.required("symbol_marker")
        .fail(
            "an empty symbol_marker matches every kernel; name a substring of this "
            "extension's kernel names");
  for (const auto& lib : strings(map, "libraries"))
    if (lib.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-") !=
            std::string::npos ||
        lib.front() == '-')
      throw ConfigError(map.get("libraries")->where(),
                        "library '" + clip(lib, 80) + "' is not a library name; write it as -l takes it (\"cuda\")");
    else
      e.libraries.push_back(lib);
  e.exports = strings(map, "exports");
  e.nvcc_flags = strings(map, "nvcc_flags");
  e.cxx_flags = strings(map, "cxx_flags");
  if (auto peak = map.get("peak_memory_gib")) {
    Located v = peak->scalar();
    char* end = nullptr;
    double gib = std::strtod(v.text.c_str(), &end);
    if (v.text.empty() || end != v.text.c_str() + v.text.size() || !(gib > 0) || gib > 4096)
      throw ConfigError(v.where,
                        "peak_memory_gib: expected a number of GiB above 0 (what one nvcc of this "
                        "extension's units takes for one arch, e.g. 10), got '" +
                            clip(v.text, 40) + "'");
    e.peak_memory_gib = gib;
  }
  return e;
}

toolchain::HeaderPackage parse_header_package(const YamlValue& node) {
  YamlMap map = node.map({"pypi", "version", "include_dirs"});
  toolchain::HeaderPackage h;
  Located name = map.required("pypi").scalar();
  if (!wheel::is_valid_project_name(name.text))
    throw ConfigError(name.where, "'" + clip(name.text, 80) + "' is not a PyPI project name");
  h.name = name.text;
  Located version = map.required("version").scalar();
  auto v = wheel::parse_version(version.text);
  if (!v) throw ConfigError(version.where, "'" + clip(version.text, 80) + "' is not a PEP 440 version");
  h.version = version.text;
  h.include_dirs = tree_paths(map, "include_dirs", "include dir");
  if (h.include_dirs.empty())
    map.self().fail("header package " + h.name + " names no include_dirs; list the wheel's header directories");
  return h;
}

// "9.0": "9.0a": a capability and the target the tree's build compiles for it.
std::map<Arch, Arch> parse_arch_targets(const YamlValue& node) {
  std::map<Arch, Arch> out;
  for (const auto& [key, value] : node.named_entries("arch")) {
    Arch from = arch_at(key);
    Arch to = arch_at(value.scalar());
    if (from.arch_specific || to.sm != from.sm)
      throw ConfigError(key.where,
                        "arch_targets maps a capability to a target of the same capability (\"9.0\": "
                        "\"9.0a\"), not " +
                            key.text + " to " + to.name());
    out.emplace(from, to);
  }
  return out;
}

void parse_license(const YamlValue& node, SourceManifest& m) {
  YamlMap map = node.map({"expression", "file"});
  m.license_expression = map.required("expression").scalar().text;
  m.license_file = tree_path(map.required("file").scalar(), "license file");
}

void check_unique_modules(const std::vector<SourceExtension>& extensions) {
  for (std::size_t i = 0; i < extensions.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      auto leaf = [](const std::string& m) { return m.substr(m.rfind('.') + 1); };
      if (leaf(extensions[i].module) == leaf(extensions[j].module))
        throw ConfigError(extensions[i].where, "extensions '" + extensions[j].module + "' and '" +
                                                   extensions[i].module +
                                                   "' end in the same name, which names their kernel family in "
                                                   "build_info.json; rename one");
    }
}

}  // namespace

SourceManifest parse_source_manifest(const std::string& text, const std::string& file) {
  YamlValue root = matrix::parse_yaml(text, file, {}, "the source manifest");
  YamlMap top =
      root.map({"kind", "describes", "markers", "package", "package_files", "summary", "license", "arch_targets", "ptx",
                "include_dirs", "headers", "cuda_libraries", "nvcc_flags", "cxx_flags", "extensions"});
  SourceManifest m;
  m.path = file;
  Located kind = top.required("kind").scalar();
  m.kind = kind.text;
  m.kind_where = kind.where;
  if (m.kind == matrix::kOurSource)
    throw ConfigError(kind.where,
                      "kind 'ours' is this repository's own tree (kernels/families.json); a source "
                      "manifest describes an upstream tree: name it, like \"upstream-sageattention\"");
  if (auto d = top.get("describes")) m.describes = d->scalar().text;
  m.markers = tree_paths(top, "markers", "marker");
  if (m.markers.empty())
    top.required("markers").fail(
        "no markers: list files that only this kind of tree has, so that "
        "`--source-dir` recognises it");
  m.package = tree_path(top.required("package").scalar(), "package directory");
  m.package_files = strings(top, "package_files");
  if (auto s = top.get("summary")) m.summary = s->scalar().text;
  parse_license(top.required("license"), m);
  if (auto t = top.get("arch_targets")) m.arch_targets = parse_arch_targets(*t);
  if (auto p = top.get("ptx")) m.ptx = p->boolean();
  m.include_dirs = tree_paths(top, "include_dirs", "include dir");
  if (auto h = top.get("headers"))
    for (const auto& item : h->list()) m.headers.push_back(parse_header_package(item));
  if (auto libs = top.get("cuda_libraries"))
    for (const Located& lib : libs->scalar_list()) {
      const auto& known = toolchain::known_cuda_libraries();
      if (std::find(known.begin(), known.end(), lib.text) == known.end())
        throw ConfigError(lib.where, "'" + clip(lib.text, 80) +
                                         "' is not a CUDA library sagebuild provisions headers for; expected one "
                                         "of cublas, cusolver, cusparse (cuda-toolkit's extras)");
      m.cuda_libraries.push_back(lib.text);
    }
  m.nvcc_flags = strings(top, "nvcc_flags");
  m.cxx_flags = strings(top, "cxx_flags");
  for (const auto& [name, node] : top.required("extensions").named_entries("extension"))
    m.extensions.push_back(parse_extension(name, node));
  if (m.extensions.empty()) top.required("extensions").fail("no extensions: name at least one extension module");
  check_unique_modules(m.extensions);
  return m;
}

SourceManifest load_source_manifest(const fs::path& path) {
  return parse_source_manifest(matrix::read_yaml_file(path, path.string()), path.string());
}

std::vector<std::string> missing_markers(const SourceManifest& m, const fs::path& tree) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& marker : m.markers)
    if (!fs::exists(tree / marker, ec)) out.push_back(marker);
  return out;
}

}  // namespace sb::plan
