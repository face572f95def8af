#include "sagebuild/matrix/rows.h"

#include <algorithm>

#include "sagebuild/common/arch.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/version.h"
#include "sagebuild/matrix/wheel_name.h"

namespace sb::matrix {
namespace {

bool matches(const std::vector<std::string>& filter, std::string_view value) {
  return filter.empty() || contains(filter, value);
}
template <typename V>
bool matches(const std::vector<V>& filter, const V& value) {
  return filter.empty() || contains(filter, value);
}

template <typename V>
bool at_least(const V& version, const std::optional<V>& minimum) {
  return !minimum || version >= *minimum;
}

// The combination a row is built for, before the ABI mode splits or merges
// Pythons.
struct Combo {
  const Package& package;
  const TorchRelease& torch;
  const TorchVariant& variant;
  const Platform& platform;
};

// Every arch the package builds with this CUDA; fails on a required one the
// CUDA cannot compile, since that row could never be built.
std::vector<Arch> archs_for(const Matrix& m, const Combo& c) {
  const CudaRelease& cuda = *find_cuda(m, c.variant.cuda);
  auto own = c.package.platform_archs.find(c.platform.tag);
  const bool per_platform = own != c.package.platform_archs.end();
  const std::vector<Arch>& required = per_platform ? own->second.archs : c.package.archs;
  const std::vector<SourceLocation>& where = per_platform ? own->second.arch_where : c.package.arch_where;
  const std::vector<Arch>& optional = per_platform ? own->second.optional_archs : c.package.optional_archs;
  std::vector<Arch> archs;
  for (std::size_t i = 0; i < required.size(); ++i) {
    const Arch& arch = required[i];
    if (!cuda_builds(cuda, arch))
      throw ConfigError(where.at(i), "package '" + c.package.name + "' needs arch " + arch.name() + ", but CUDA " +
                                         cuda.version.release_str() + " (torch " + c.torch.version.str() +
                                         ") cannot build it: arch " + arch.name() + " " + cuda_requirement(m, arch) +
                                         ". Raise the package's min_cuda, move the arch to "
                                         "optional_archs, or exclude the combination");
    archs.push_back(arch);
  }
  for (const Arch& arch : optional)
    if (cuda_builds(cuda, arch)) archs.push_back(arch);
  std::sort(archs.begin(), archs.end());
  return archs;
}

std::vector<PythonVersion> pythons_for(const Matrix& m, const Combo& c) {
  std::vector<PythonVersion> out;
  for (const auto& python : c.torch.pythons) {
    if (!at_least(python, c.package.min_python)) continue;
    bool excluded = std::any_of(m.exclusions.begin(), m.exclusions.end(), [&](const Exclusion& e) {
      return excludes(e, c.package.name, c.torch.version, c.variant.cuda, c.platform.tag, python);
    });
    if (!excluded) out.push_back(python);
  }
  return out;
}

// The encodings have limits (a build tag cannot say torch 2.9.10); a torch
// release the package's scheme cannot name is a matrix error.
std::string encoded(std::optional<std::string> value, const std::string& why, const Combo& c, std::string_view scheme) {
  if (value) return *value;
  throw ConfigError(c.torch.where, "package '" + c.package.name + "' names its wheels by " + std::string(scheme) +
                                       ", which cannot encode torch " + c.torch.version.str() + " with CUDA " +
                                       c.variant.cuda.release_str() + ": " + why);
}

void name_wheel(Row& row, const Combo& c) {
  std::string why;
  if (row.naming == NamingScheme::build_tag) {
    row.build_tag = encoded(build_tag(row.torch, row.cuda, &why), why, c, "build tag");
    row.wheel_version = row.version;
  } else {
    row.local_version = encoded(local_version(row.cuda, row.torch, &why), why, c, "local version");
    row.wheel_version = row.version + "+" + row.local_version;
  }
  row.wheel_filename =
      wheel_filename(row.project, row.wheel_version, row.build_tag, row.python_tag, row.abi_tag, row.platform);
}

std::string make_id(const Row& row) {
  std::string abi = row.abi_mode == AbiMode::abi3 ? "abi3" : row.python_tag;
  return row.package + "-" + row.version + "-torch" + row.torch.str() + "-" + row.cuda_tag + "-" + abi + "-" +
         row.platform;
}

Row make_row(const Combo& c, const std::optional<UpstreamTree>& upstream, std::vector<PythonVersion> pythons,
             std::vector<Arch> archs, const PythonVersion& oldest_python) {
  Row row;
  row.package = c.package.name;
  row.project = c.package.project;
  row.source = c.package.source;
  row.version = c.package.version;
  row.abi_mode = c.package.abi_mode;
  row.pythons = std::move(pythons);
  row.build_python = row.pythons.front();
  row.python_tag = "cp" + row.build_python.nodot();
  row.abi_tag = row.abi_mode == AbiMode::abi3 ? "abi3" : row.python_tag;
  row.torch = c.torch.version;
  row.cuda = c.variant.cuda;
  row.cuda_tag = row.cuda.tag();
  row.platform = c.platform.tag;
  row.runner_os = c.platform.runner;
  row.platform_opt_in = c.platform.opt_in;
  set_archs(row, std::move(archs));
  row.naming = c.package.naming;
  name_wheel(row, c);
  // Per-interpreter tags already pin the Python; the floor still says which
  // Pythons the release supports at all, as abi3's does.
  row.requires_python = ">=" + oldest_python.str();
  bool stable = c.package.stable_abi_min_torch && at_least(row.torch, c.package.stable_abi_min_torch);
  row.torch_binding = stable ? wheel::TorchBinding::stable_abi : wheel::TorchBinding::classic;
  row.torch_requirement =
      wheel::torch_requirement(row.torch_binding, row.torch.str(),
                               c.package.stable_abi_target ? c.package.stable_abi_target->str() : std::string());
  row.pypi_buildable = c.variant.pypi && c.platform.pypi_torch_has_cuda;
  row.pypi_variant = c.variant.pypi;
  row.torch_index = row.pypi_buildable ? std::string() : torch_index_url(c.platform, row.cuda_tag);
  row.kernels_manifest = c.package.kernels;
  if (c.package.source != kOurSource && upstream) {
    row.upstream_repository = upstream->repository;
    row.upstream_commit = upstream->commit;
  }
  row.id = make_id(row);
  return row;
}

void add_rows(const Matrix& m, const Combo& c, std::vector<Row>& rows) {
  std::vector<PythonVersion> pythons = pythons_for(m, c);
  if (pythons.empty()) return;
  std::vector<Arch> archs = archs_for(m, c);
  if (c.package.abi_mode == AbiMode::abi3) {
    rows.push_back(make_row(c, m.upstream, pythons, archs, pythons.front()));
    return;
  }
  for (const auto& python : pythons) rows.push_back(make_row(c, m.upstream, {python}, archs, pythons.front()));
}

void add_package_rows(const Matrix& m, const Package& package, std::vector<Row>& rows) {
  for (const auto& torch : m.torch) {
    if (!at_least(torch.version, package.min_torch)) continue;
    for (const auto& variant : torch.variants) {
      if (!at_least(variant.cuda, package.min_cuda)) continue;
      for (const auto& platform : m.platforms)
        if (matches(package.platforms, platform.tag)) add_rows(m, Combo{package, torch, variant, platform}, rows);
    }
  }
}

// How many rows the package would give before exclusions and min_python,
// counted without making any (saturating at `limit` + 1): the product of
// its torch releases, their CUDA variants and Pythons, and its platforms.
std::uint64_t rows_before_exclusions(const Matrix& m, const Package& package, std::uint64_t limit) {
  std::uint64_t platforms = 0;
  for (const auto& platform : m.platforms) platforms += matches(package.platforms, platform.tag) ? 1 : 0;
  if (platforms == 0) return 0;
  std::uint64_t total = 0;
  for (const auto& torch : m.torch) {
    if (!at_least(torch.version, package.min_torch)) continue;
    std::uint64_t variants = 0;
    for (const auto& variant : torch.variants) variants += at_least(variant.cuda, package.min_cuda) ? 1 : 0;
    std::uint64_t per_platform = package.abi_mode == AbiMode::abi3 ? 1 : torch.pythons.size();
    // Each factor is at most the matrix's node count (100,000): no overflow
    // before the saturation below.
    total += variants * per_platform * platforms;
    if (total > limit) return limit + 1;
  }
  return total;
}

}  // namespace

std::string torch_index_url(const Platform& platform, const std::string& cuda_tag) {
  std::string url = platform.torch_index;
  url.replace(url.find("{cuda_tag}"), std::string_view("{cuda_tag}").size(), cuda_tag);
  return url;
}

bool excludes(const Exclusion& e, std::string_view package, const TorchVersion& torch, const CudaVersion& cuda,
              std::string_view platform, const PythonVersion& python) {
  return matches(e.packages, package) && matches(e.torch, torch) && matches(e.cuda, cuda) &&
         matches(e.platforms, platform) && matches(e.pythons, python);
}

bool row_less(const Row& a, const Row& b) {
  if (a.package != b.package) return a.package < b.package;
  if (auto c = a.torch <=> b.torch; c != 0) return c < 0;
  if (auto c = a.cuda <=> b.cuda; c != 0) return c < 0;
  if (auto c = a.build_python <=> b.build_python; c != 0) return c < 0;
  return a.platform < b.platform;
}

void set_archs(Row& row, std::vector<Arch> archs) {
  row.archs = std::move(archs);
  row.ptx_arch = ptx_arch(row.archs);
}

std::vector<Row> compute_rows(const Matrix& m) {
  // Bounded before any row is made: a few KB of YAML can name a product of
  // millions (16 s and 2.7 GiB, then std::bad_alloc in --format github).
  std::uint64_t total = 0;
  for (const auto& package : m.packages) {
    total += rows_before_exclusions(m, package, kMaxRows);
    if (total > kMaxRows)
      throw ConfigError(package.where, "the matrix expands to more than " + std::to_string(kMaxRows) +
                                           " rows before exclusions (each package's torch releases x CUDA variants "
                                           "x Pythons x platforms; this package reaches the bound); expected at most " +
                                           std::to_string(kMaxRows) +
                                           ": narrow the package's platforms, min_torch or min_cuda, or split the "
                                           "matrix");
  }
  std::vector<Row> rows;
  for (const auto& package : m.packages) add_package_rows(m, package, rows);
  std::sort(rows.begin(), rows.end(), row_less);
  return rows;
}

}  // namespace sb::matrix
