// load_matrix: YAML -> Matrix, section by section. Each parse_* reads one
// section through YamlValue (shape errors) and checks every name it refers
// to against the sections before it (unknown-value errors), so the order of
// the sections in parse_matrix is the order of dependence.  The values every
// section reads: load_values.h; `upstream:` and `packages:`: load_packages.cc.
#include <algorithm>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/text.h"
#include "sagebuild/matrix/load_packages.h"
#include "sagebuild/matrix/load_values.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/matrix/profile.h"
#include "sagebuild/matrix/rows.h"
#include "sagebuild/matrix/suggest.h"
#include "sagebuild/matrix/version.h"
#include "sagebuild/matrix/wheel_name.h"
#include "sagebuild/matrix/yaml_reader.h"

namespace sb::matrix {
namespace {

// ---- sections -----------------------------------------------------------------

void parse_pythons(const YamlValue& node, Matrix& m) {
  for (const Located& python : node.scalar_list()) {
    PythonVersion v = python_version(python);
    if (contains(m.pythons, v)) throw ConfigError(python.where, "Python " + python.text + " is listed twice");
    m.pythons.push_back(v);
  }
  std::sort(m.pythons.begin(), m.pythons.end());
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
    YamlMap map = value.map({"runner", "pypi_torch_has_cuda", "torch_index", "opt_in"});
    check_word(tag, "", "platform tag", "linux_x86_64 or win_amd64 (lowercase letters, digits, '_')");
    check_word(map.required("runner").scalar(), "ABCDEFGHIJKLMNOPQRSTUVWXYZ-.", "runner",
               "ubuntu-24.04 (letters, digits, '-', '_', '.')");
    m.platforms.push_back(Platform{tag.text, map.required("runner").scalar().text,
                                   map.required("pypi_torch_has_cuda").boolean(),
                                   torch_index_template(map.required("torch_index")), false, tag.where});
    if (auto opt_in = map.get("opt_in")) m.platforms.back().opt_in = opt_in->boolean();
  }
}

void parse_cuda(const YamlValue& node, Matrix& m) {
  for (const auto& [version, value] : node.named_entries("CUDA version")) {
    CudaRelease cuda{cuda_version(version), {}, version.where};
    std::string why;
    if (!cuda.version.code(&why))
      throw ConfigError(version.where,
                        "CUDA " + cuda.version.release_str() + " cannot be written in a wheel's name: " + why);
    for (const Located& arch : value.map({"archs"}).required("archs").scalar_list())
      cuda.archs.push_back(parse_arch_at(arch.text, arch.where));
    m.cuda.push_back(std::move(cuda));
  }
  std::sort(m.cuda.begin(), m.cuda.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
}

TorchVariant parse_variant(const YamlValue& node, const Matrix& m) {
  YamlMap map = node.map({"cuda", "pypi"});
  Located cuda = map.required("cuda").scalar();
  check_known(cuda, cuda_versions(m), "CUDA version", " (a new one goes under `cuda:` first)");
  return TorchVariant{cuda_version(cuda), optional_bool(map, "pypi"), cuda.where};
}

std::vector<TorchVariant> parse_variants(const YamlValue& node, const Matrix& m, const std::string& torch) {
  std::vector<TorchVariant> variants;
  for (const YamlValue& item : node.list()) {
    TorchVariant v = parse_variant(item, m);
    for (const auto& seen : variants) {
      if (seen.cuda == v.cuda)
        throw ConfigError(v.where, "torch " + torch + " lists CUDA " + v.cuda.release_str() + " twice");
      if (seen.pypi && v.pypi)
        throw ConfigError(v.where, "torch " + torch + " marks both CUDA " + seen.cuda.release_str() + " and " +
                                       v.cuda.release_str() + " as PyPI's variant; PyPI serves one");
    }
    variants.push_back(v);
  }
  std::sort(variants.begin(), variants.end(), [](const auto& a, const auto& b) { return a.cuda < b.cuda; });
  return variants;
}

void parse_torch(const YamlValue& node, Matrix& m) {
  for (const auto& [version, value] : node.named_entries("torch release")) {
    YamlMap map = value.map({"pythons", "variants"});
    TorchRelease t{torch_version(version), {}, {}, version.where};
    for (const auto& seen : m.torch)
      if (seen.version == t.version)
        throw ConfigError(version.where, "torch " + version.text + " is the release " + seen.version.str() +
                                             " names already; list each release once");
    t.pythons =
        known_python_list(map, "pythons", m.pythons, nullptr, " (a new one goes in the top-level `pythons:` first)");
    std::sort(t.pythons.begin(), t.pythons.end());
    if (t.pythons.empty()) map.self().fail("torch " + t.version.str() + " needs at least one Python");
    t.variants = parse_variants(map.required("variants"), m, t.version.str());
    if (t.variants.empty()) map.self().fail("torch " + t.version.str() + " needs at least one variant");
    m.torch.push_back(std::move(t));
  }
  std::sort(m.torch.begin(), m.torch.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
}

void parse_exclusions(const YamlValue& node, Matrix& m) {
  for (const YamlValue& item : node.list()) {
    YamlMap map = item.map({"packages", "torch", "cuda", "pythons", "platforms", "reason"});
    Exclusion e;
    e.where = item.where();
    e.packages = known_list(map, "packages", package_names(m), "package");
    e.torch = known_torch_list(map, "torch", m);
    e.cuda = known_cuda_list(map, "cuda", m);
    e.pythons = known_python_list(map, "pythons", m.pythons);
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
  p.torch = known_torch_list(map, "torch", m, &s.torch);
  p.cuda = known_cuda_list(map, "cuda", m, &s.cuda);
  p.pythons = known_python_list(map, "pythons", m.pythons, &s.pythons);
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
