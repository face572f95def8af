// load_matrix: YAML -> Matrix, section by section. Each parse_* reads one
// section through YamlValue (shape errors) and checks every name it refers
// to against the sections before it (unknown-value errors), so the order of
// the sections in this file is the order of dependence.
#include <algorithm>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/text.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/matrix/profile.h"
#include "sagebuild/matrix/rows.h"
#include "sagebuild/matrix/suggest.h"
#include "sagebuild/matrix/version.h"
#include "sagebuild/matrix/wheel_name.h"
#include "sagebuild/matrix/yaml_reader.h"
#include "sagebuild/wheel/names.h"
#include "sagebuild/wheel/pep440.h"

namespace sb::matrix {
namespace {

// ---- values -------------------------------------------------------------------

// `hint` says how to make a new value valid, where that is not obvious.
void check_known(const Located& value, const std::vector<std::string>& choices, std::string_view noun,
                 std::string_view hint = {}) {
  if (contains(choices, value.text)) return;
  throw ConfigError(value.where, "unknown " + std::string(noun) + " '" + value.text + "'" +
                                     did_you_mean(value.text, choices) + "; valid: " + join(choices) +
                                     std::string(hint));
}

std::string version_text(const Located& value, std::string_view noun) {
  if (!DottedVersion::parse(value.text))
    throw ConfigError(value.where, "'" + value.text + "' is not a " + std::string(noun) +
                                       " version; write digits and dots, like \"12.8\"");
  return value.text;
}

std::vector<std::string> known_list(const YamlMap& map, std::string_view key, const std::vector<std::string>& choices,
                                    std::string_view noun, std::vector<Located>* located = nullptr,
                                    std::string_view hint = {}) {
  std::vector<std::string> out;
  auto value = map.get(key);
  if (!value) return out;
  for (const Located& item : value->scalar_list()) {
    check_known(item, choices, noun, hint);
    out.push_back(item.text);
    if (located) located->push_back(item);
  }
  return out;
}

std::string optional_scalar(const YamlMap& map, std::string_view key) {
  auto value = map.get(key);
  return value ? value->scalar().text : std::string();
}

bool optional_bool(const YamlMap& map, std::string_view key) {
  auto value = map.get(key);
  return value && value->boolean();
}

// ---- names the later sections refer to ----------------------------------------

std::vector<std::string> torch_versions(const Matrix& m) {
  std::vector<std::string> out;
  for (const auto& t : m.torch) out.push_back(t.version);
  return out;
}
std::vector<std::string> cuda_versions(const Matrix& m) {
  std::vector<std::string> out;
  for (const auto& c : m.cuda) out.push_back(c.version);
  return out;
}
std::vector<std::string> platform_tags(const Matrix& m) {
  std::vector<std::string> out;
  for (const auto& p : m.platforms) out.push_back(p.tag);
  return out;
}
std::vector<std::string> package_names(const Matrix& m) {
  std::vector<std::string> out;
  for (const auto& p : m.packages) out.push_back(p.name);
  return out;
}

// ---- sections -----------------------------------------------------------------

void parse_pythons(const YamlValue& node, Matrix& m) {
  for (const Located& python : node.scalar_list()) {
    version_text(python, "Python");
    if (contains(m.pythons, python.text)) throw ConfigError(python.where, "Python " + python.text + " is listed twice");
    m.pythons.push_back(python.text);
  }
  std::sort(m.pythons.begin(), m.pythons.end(), version_less);
}

// "https://download.pytorch.org/whl/{cuda_tag}": where the CUDA builds of
// torch that PyPI does not serve come from, one index per CUDA.
std::string torch_index_template(const YamlValue& node) {
  Located url = node.scalar();
  const std::string placeholder = "{cuda_tag}";
  auto at = url.text.find(placeholder);
  if (url.text.rfind("https://", 0) != 0 || at == std::string::npos ||
      url.text.find(placeholder, at + 1) != std::string::npos)
    throw ConfigError(url.where,
                      "torch_index '" + url.text +
                          "' is not an https URL with one {cuda_tag} "
                          "(the variant's code, cu128), like \"https://download.pytorch.org/whl/{cuda_tag}\"");
  return url.text;
}

// A platform tag and a runner label reach wheel names, paths and the release
// workflow's `runs-on:` and `run:` lines: only the characters a wheel's
// platform tag (lowercase letters, digits, '_') or a runner label (letters,
// digits, '-', '_', '.') is made of.
void check_word(const Located& value, std::string_view extra, const std::string& what, const std::string& example) {
  bool ok = !value.text.empty() && value.text.size() <= 64;
  for (char c : value.text)
    ok =
        ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || extra.find(c) != std::string_view::npos);
  if (!ok)
    throw ConfigError(value.where, what + " '" + printable(clip(value.text, 64)) +
                                       "' is not made of the characters it may hold; expected e.g. " + example);
}

void parse_platforms(const YamlValue& node, Matrix& m) {
  for (const auto& [tag, value] : node.named_entries("platform")) {
    YamlMap map = value.map({"runner", "pypi_torch_has_cuda", "torch_index"});
    check_word(tag, "", "platform tag", "linux_x86_64 or win_amd64 (lowercase letters, digits, '_')");
    check_word(map.required("runner").scalar(), "ABCDEFGHIJKLMNOPQRSTUVWXYZ-.", "runner",
               "ubuntu-24.04 (letters, digits, '-', '_', '.')");
    m.platforms.push_back(Platform{tag.text, map.required("runner").scalar().text,
                                   map.required("pypi_torch_has_cuda").boolean(),
                                   torch_index_template(map.required("torch_index")), tag.where});
  }
}

void parse_cuda(const YamlValue& node, Matrix& m) {
  for (const auto& [version, value] : node.named_entries("CUDA version")) {
    CudaRelease cuda{version_text(version, "CUDA"), {}, version.where};
    std::string why;
    if (!cuda_code(cuda.version, &why))
      throw ConfigError(version.where, "CUDA " + cuda.version + " cannot be written in a wheel's name: " + why);
    for (const Located& arch : value.map({"archs"}).required("archs").scalar_list())
      cuda.archs.push_back(parse_arch_at(arch.text, arch.where));
    m.cuda.push_back(std::move(cuda));
  }
  std::sort(m.cuda.begin(), m.cuda.end(),
            [](const auto& a, const auto& b) { return version_less(a.version, b.version); });
}

TorchVariant parse_variant(const YamlValue& node, const Matrix& m) {
  YamlMap map = node.map({"cuda", "pypi"});
  Located cuda = map.required("cuda").scalar();
  check_known(cuda, cuda_versions(m), "CUDA version", " (a new one goes under `cuda:` first)");
  return TorchVariant{cuda.text, optional_bool(map, "pypi"), cuda.where};
}

std::vector<TorchVariant> parse_variants(const YamlValue& node, const Matrix& m, const std::string& torch) {
  std::vector<TorchVariant> variants;
  for (const YamlValue& item : node.list()) {
    TorchVariant v = parse_variant(item, m);
    for (const auto& seen : variants) {
      if (seen.cuda == v.cuda) throw ConfigError(v.where, "torch " + torch + " lists CUDA " + v.cuda + " twice");
      if (seen.pypi && v.pypi)
        throw ConfigError(v.where, "torch " + torch + " marks both CUDA " + seen.cuda + " and " + v.cuda +
                                       " as PyPI's variant; PyPI serves one");
    }
    variants.push_back(v);
  }
  std::sort(variants.begin(), variants.end(),
            [](const auto& a, const auto& b) { return version_less(a.cuda, b.cuda); });
  return variants;
}

void parse_torch(const YamlValue& node, Matrix& m) {
  for (const auto& [version, value] : node.named_entries("torch release")) {
    YamlMap map = value.map({"pythons", "variants"});
    TorchRelease t{version_text(version, "torch"), {}, {}, version.where};
    t.pythons =
        known_list(map, "pythons", m.pythons, "Python", nullptr, " (a new one goes in the top-level `pythons:` first)");
    std::sort(t.pythons.begin(), t.pythons.end(), version_less);
    if (t.pythons.empty()) map.self().fail("torch " + t.version + " needs at least one Python");
    t.variants = parse_variants(map.required("variants"), m, t.version);
    if (t.variants.empty()) map.self().fail("torch " + t.version + " needs at least one variant");
    m.torch.push_back(std::move(t));
  }
  std::sort(m.torch.begin(), m.torch.end(),
            [](const auto& a, const auto& b) { return version_less(a.version, b.version); });
}

// "owner/name", as GitHub spells a repository.
bool is_github_repository(const std::string& s) {
  auto slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() || s.find('/', slash + 1) != std::string::npos)
    return false;
  return s.size() <= 140 &&
         s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./") == std::string::npos;
}

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

std::string optional_version(const YamlMap& map, std::string_view key, std::string_view noun) {
  auto value = map.get(key);
  return value ? version_text(value->scalar(), noun) : std::string();
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

Package parse_package(const Located& name, const YamlValue& node, const Matrix& m) {
  YamlMap map = node.map({"version", "source", "project", "kernels", "abi", "naming", "archs", "optional_archs",
                          "min_python", "min_torch", "min_cuda", "platforms", "stable_abi"});
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
  p.min_python = optional_version(map, "min_python", "Python");
  p.min_torch = optional_version(map, "min_torch", "torch");
  p.min_cuda = optional_version(map, "min_cuda", "CUDA");
  p.platforms = known_list(map, "platforms", platform_tags(m), "platform");
  if (auto stable = map.get("stable_abi")) {
    YamlMap s = stable->map({"min_torch", "target_version"});
    p.stable_abi_min_torch = version_text(s.required("min_torch").scalar(), "torch");
    p.stable_abi_target = version_text(s.required("target_version").scalar(), "torch");
    if (compare_versions(p.stable_abi_min_torch, p.stable_abi_target) < 0)
      s.self().fail("stable_abi.min_torch " + p.stable_abi_min_torch + " is older than its target_version " +
                    p.stable_abi_target + ": an extension loads only in torch >= its target");
  }
  return p;
}

void parse_packages(const YamlValue& node, Matrix& m) {
  for (const auto& [name, value] : node.named_entries("package")) m.packages.push_back(parse_package(name, value, m));
  std::sort(m.packages.begin(), m.packages.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

void parse_exclusions(const YamlValue& node, Matrix& m) {
  for (const YamlValue& item : node.list()) {
    YamlMap map = item.map({"packages", "torch", "cuda", "pythons", "platforms", "reason"});
    Exclusion e;
    e.where = item.where();
    e.packages = known_list(map, "packages", package_names(m), "package");
    e.torch = known_list(map, "torch", torch_versions(m), "torch release");
    e.cuda = known_list(map, "cuda", cuda_versions(m), "CUDA version");
    e.pythons = known_list(map, "pythons", m.pythons, "Python");
    e.platforms = known_list(map, "platforms", platform_tags(m), "platform");
    // An exclusion without its reason is a rule nobody can later undo safely.
    e.reason = map.required("reason").scalar().text;
    m.exclusions.push_back(std::move(e));
  }
}

std::vector<std::string> arch_list(const YamlMap& map, std::vector<Located>& located) {
  std::vector<std::string> out;
  if (auto value = map.get("archs"))
    for (const Located& written : value->scalar_list()) {
      out.push_back(parse_arch_at(written.text, written.where).name());
      located.push_back(written);
    }
  return out;
}

// A count of at least 1 ("newest_torch: 3").
int positive_count(const YamlValue& node) {
  Located value = node.scalar();
  int n = 0;
  bool digits =
      !value.text.empty() && value.text.size() <= 4 && value.text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) n = std::stoi(value.text);
  if (n < 1)
    throw ConfigError(value.where, "expected a count of at least 1 for " + node.what() + ", got '" + value.text + "'");
  return n;
}

std::pair<Profile, ProfileSource> parse_profile(const Located& name, const YamlValue& node, const Matrix& m) {
  YamlMap map = node.map({"description", "packages", "torch", "cuda", "pythons", "platforms", "archs", "newest_python",
                          "pypi_only", "default_cuda", "newest_torch", "rows"});
  Profile p;
  ProfileSource s;
  p.name = name.text;
  p.where = name.where;
  s.name = name;
  p.description = optional_scalar(map, "description");
  p.packages = known_list(map, "packages", package_names(m), "package", &s.packages);
  p.torch = known_list(map, "torch", torch_versions(m), "torch release", &s.torch);
  p.cuda = known_list(map, "cuda", cuda_versions(m), "CUDA version", &s.cuda);
  p.pythons = known_list(map, "pythons", m.pythons, "Python", &s.pythons);
  p.platforms = known_list(map, "platforms", platform_tags(m), "platform", &s.platforms);
  p.archs = arch_list(map, s.archs);
  p.newest_python = optional_bool(map, "newest_python");
  p.pypi_only = optional_bool(map, "pypi_only");
  p.default_cuda = optional_bool(map, "default_cuda");
  if (auto newest = map.get("newest_torch")) p.newest_torch = positive_count(*newest);
  if (auto rows = map.get("rows"))
    for (const Located& id : rows->scalar_list()) {
      p.rows.push_back(id.text);
      s.rows.push_back(id);
    }
  return {p, s};
}

bool has_filters(const Profile& p) {
  return !p.packages.empty() || !p.torch.empty() || !p.cuda.empty() || !p.pythons.empty() || !p.platforms.empty() ||
         !p.archs.empty() || p.newest_python || p.pypi_only || p.default_cuda || p.newest_torch > 0;
}

void parse_profiles(const YamlValue& node, Matrix& m) {
  for (const auto& [name, value] : node.named_entries("profile")) {
    auto [profile, source] = parse_profile(name, value, m);
    if (!profile.rows.empty() && has_filters(profile))
      throw ConfigError(name.where, "profile '" + profile.name +
                                        "' has both `rows` and filters; "
                                        "use one or the other (rows name exact builds)");
    check_profile(m, profile, source);
    m.profiles.push_back(std::move(profile));
  }
}

}  // namespace

Matrix load_matrix(const std::filesystem::path& path) {
  return parse_matrix(read_yaml_file(path, path.string()), path.string());
}

Matrix parse_matrix(const std::string& text, const std::string& file) {
  YamlValue root = parse_yaml(text, file);
  YamlMap top = root.map({"pythons", "platforms", "cuda", "torch", "upstream", "packages", "exclude", "profiles"});
  Matrix m;
  m.path = file;
  parse_pythons(top.required("pythons"), m);
  parse_platforms(top.required("platforms"), m);
  parse_cuda(top.required("cuda"), m);
  parse_torch(top.required("torch"), m);
  if (auto upstream = top.get("upstream")) parse_upstream(*upstream, m);
  parse_packages(top.required("packages"), m);
  check_upstream_sources(m);
  if (auto exclude = top.get("exclude")) parse_exclusions(*exclude, m);
  m.rows = compute_rows(m);
  parse_profiles(top.required("profiles"), m);
  return m;
}

}  // namespace sb::matrix
