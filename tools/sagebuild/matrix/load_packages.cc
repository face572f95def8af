#include "sagebuild/matrix/load_packages.h"

#include <algorithm>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/text.h"
#include "sagebuild/matrix/load_values.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/suggest.h"
#include "sagebuild/matrix/version.h"
#include "sagebuild/wheel/names.h"
#include "sagebuild/wheel/pep440.h"

namespace sb::matrix {
namespace {

// "owner/name", as GitHub spells a repository.
bool is_github_repository(const std::string& s) {
  auto slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() || s.find('/', slash + 1) != std::string::npos)
    return false;
  return s.size() <= 140 &&
         s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./") == std::string::npos;
}

}  // namespace

// `upstream: {repository: owner/name, commit: <40 hex>}`: where the trees of
// upstream sources come from, pinned to one commit.
void parse_upstream(const YamlValue& node, Matrix& m) {
  YamlMap map = node.map({"repository", "commit"});
  Located repository = map.required("repository").scalar();
  Located commit = map.required("commit").scalar();
  if (!is_github_repository(repository.text))
    throw ConfigError(repository.where, "upstream repository '" + clip(repository.text, 80) +
                                            "' is not a GitHub owner/name; write it like \"thu-ml/SageAttention\"");
  if (commit.text.size() != 40 || commit.text.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw ConfigError(commit.where, "upstream commit '" + clip(commit.text, 80) +
                                        "' is not a full commit id; write its 40 lower-case hex digits (a branch or "
                                        "tag moves, an abbreviated id can become ambiguous): git rev-parse <ref>");
  m.upstream = UpstreamTree{repository.text, commit.text, node.where()};
}

// A package built from upstream's tree needs to know which tree: `upstream:`.
void check_upstream_sources(const Matrix& m) {
  if (m.upstream) return;
  for (const Package& p : m.packages)
    if (p.source != kOurSource)
      throw ConfigError(p.source_where, "package '" + p.name + "' is built from an upstream tree (source: " + p.source +
                                            "), but the matrix has no top-level `upstream:` saying which repository "
                                            "and commit; add `upstream: {repository: owner/name, commit: <40 hex "
                                            "digits>}`");
}

namespace {

template <typename Enum>
Enum parse_choice(const YamlValue& node, std::vector<std::pair<std::string, Enum>> choices) {
  Located value = node.scalar();
  std::vector<std::string> names;
  for (const auto& [name, e] : choices) {
    if (name == value.text) return e;
    names.push_back(name);
  }
  throw ConfigError(value.where, "'" + value.text + "' is not a valid " + node.what() +
                                     did_you_mean(value.text, names) + "; valid: " + join(names));
}

// Every arch a package names must be one some CUDA in the matrix can build.
std::vector<Arch> package_archs(const Matrix& m, const YamlMap& map, std::string_view key,
                                std::vector<SourceLocation>* where) {
  std::vector<Arch> out;
  auto value = map.get(key);
  if (!value) return out;
  for (const Located& written : value->scalar_list()) {
    Arch arch = parse_arch_at(written.text, written.where);
    if (!any_cuda_builds(m, arch))
      throw ConfigError(written.where, "arch " + arch.name() +
                                           " is built by no CUDA version in "
                                           "`cuda:`; check the spelling (\"9.0a\", \"12.0\")");
    out.push_back(arch);
    if (where) where->push_back(written.where);
  }
  return out;
}

// A package's name and version go into every wheel name: a project name and
// a PEP 440 version without a local label (local-version naming adds one).
void check_package_identity(const Located& name, const Located& version) {
  if (!wheel::is_valid_project_name(name.text))
    throw ConfigError(name.where, "package '" + clip(name.text, 80) +
                                      "' is not a valid project name; use letters, digits, '.', '_', '-'");
  auto v = wheel::parse_version(version.text);
  if (!v || !v->local.empty())
    throw ConfigError(version.where, "version '" + clip(version.text, 80) + "' of package '" + name.text + "' " +
                                         (v ? "carries a local label (+...), which the naming scheme adds"
                                            : "is not a PEP 440 version") +
                                         "; expected a version like 2.2.0");
}

// "ours" (this tree: `kernels:` names its manifest) or an upstream tree's
// kind, described by sources/<kind>.yaml, which names no kernels here.
void parse_source(const YamlMap& map, Package& p) {
  p.source_where = p.where;
  if (auto source = map.get("source")) {
    Located kind = source->scalar();
    bool name_like = !kind.text.empty() && kind.text.size() <= 64 &&
                     kind.text.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
    if (!name_like)
      throw ConfigError(kind.where, "source '" + clip(kind.text, 80) + "' of package '" + p.name +
                                        "' is not a source kind; write \"ours\" (this repository) or an upstream "
                                        "kind in lower case, like \"upstream-sageattention\" (sources/<kind>.yaml)");
    p.source = kind.text;
    p.source_where = kind.where;
  }
  auto kernels = map.get("kernels");
  if (p.source == kOurSource) {
    p.kernels = map.required("kernels").scalar().text;
  } else if (kernels) {
    throw ConfigError(kernels->where(), "package '" + p.name + "' is built from an upstream tree (source: " + p.source +
                                            "), which sources/" + p.source +
                                            ".yaml describes; `kernels` names our own tree's manifest: remove it");
  }
}

// `platform_archs: {<platform>: {archs: [...], optional_archs: [...]}}`.
void parse_platform_archs(const YamlValue& node, const Matrix& m, Package& p) {
  const std::vector<std::string> known = platform_tags(m);
  for (const auto& [tag, value] : node.named_entries("platform")) {
    if (!contains(known, tag.text))
      throw ConfigError(tag.where, "platform_archs names platform '" + clip(tag.text, 64) +
                                       "', which is not in `platforms:`" + did_you_mean(tag.text, known) +
                                       "; valid: " + join(known));
    YamlMap map = value.map({"archs", "optional_archs"});
    Package::PlatformArchs archs;
    archs.archs = package_archs(m, map, "archs", &archs.arch_where);
    if (archs.archs.empty())
      map.self().fail("platform_archs." + tag.text + " of package '" + p.name + "' needs at least one arch in `archs`");
    archs.optional_archs = package_archs(m, map, "optional_archs", nullptr);
    p.platform_archs[tag.text] = std::move(archs);
  }
}

Package parse_package(const Located& name, const YamlValue& node, const Matrix& m) {
  YamlMap map = node.map({"version", "source", "project", "kernels", "abi", "naming", "archs", "optional_archs",
                          "min_python", "min_torch", "min_cuda", "platforms", "stable_abi", "platform_archs"});
  Package p;
  p.name = name.text;
  p.project = name.text;
  p.where = name.where;
  Located version = map.required("version").scalar();
  check_package_identity(name, version);
  p.version = version.text;
  if (auto project = map.get("project")) {
    Located written = project->scalar();
    check_package_identity(written, version);
    p.project = written.text;
  }
  parse_source(map, p);
  p.abi_mode = parse_choice<AbiMode>(map.required("abi"),
                                     {{"abi3", AbiMode::abi3}, {"per-interpreter", AbiMode::per_interpreter}});
  p.naming = parse_choice<NamingScheme>(
      map.required("naming"), {{"build-tag", NamingScheme::build_tag}, {"local-version", NamingScheme::local_version}});
  p.archs = package_archs(m, map, "archs", &p.arch_where);
  if (p.archs.empty()) map.self().fail("package '" + p.name + "' needs at least one arch in `archs`");
  p.optional_archs = package_archs(m, map, "optional_archs", nullptr);
  if (auto min_python = map.get("min_python")) p.min_python = python_version(min_python->scalar());
  if (auto min_torch = map.get("min_torch")) p.min_torch = torch_version(min_torch->scalar());
  if (auto min_cuda = map.get("min_cuda")) p.min_cuda = cuda_version(min_cuda->scalar());
  p.platforms = known_list(map, "platforms", platform_tags(m), "platform");
  if (auto per_platform = map.get("platform_archs")) parse_platform_archs(*per_platform, m, p);
  if (auto stable = map.get("stable_abi")) {
    YamlMap s = stable->map({"min_torch", "target_version"});
    p.stable_abi_min_torch = torch_version(s.required("min_torch").scalar());
    p.stable_abi_target = torch_version(s.required("target_version").scalar());
    if (*p.stable_abi_min_torch < *p.stable_abi_target)
      s.self().fail("stable_abi.min_torch " + p.stable_abi_min_torch->str() + " is older than its target_version " +
                    p.stable_abi_target->str() + ": an extension loads only in torch >= its target");
  }
  return p;
}

}  // namespace

void parse_packages(const YamlValue& node, Matrix& m) {
  for (const auto& [name, value] : node.named_entries("package")) m.packages.push_back(parse_package(name, value, m));
  std::sort(m.packages.begin(), m.packages.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

}  // namespace sb::matrix
