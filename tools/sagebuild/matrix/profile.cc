#include "sagebuild/matrix/profile.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "sagebuild/common/arch.h"
#include "sagebuild/matrix/load_values.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/rows.h"
#include "sagebuild/matrix/suggest.h"
#include "sagebuild/matrix/version.h"

namespace sb::matrix {
namespace {

template <typename V>
bool any_of_in(const std::vector<V>& filter, const std::vector<V>& values) {
  if (filter.empty()) return true;
  return std::any_of(values.begin(), values.end(), [&](const V& v) { return contains(filter, v); });
}

bool passes_filters(const Profile& p, const Row& row) {
  if (row.platform_opt_in && !contains(p.platforms, row.platform)) return false;
  return any_of_in(p.packages, {row.package}) && any_of_in(p.torch, {row.torch}) && any_of_in(p.cuda, {row.cuda}) &&
         any_of_in(p.platforms, {row.platform}) && any_of_in(p.pythons, row.pythons) &&
         (!p.pypi_only || row.pypi_buildable) && (!p.default_cuda || row.pypi_variant);
}

// Keeps the profile's archs that the row builds; false if none is left.
bool restrict_archs(const Profile& p, Row& row) {
  if (p.archs.empty()) return true;
  std::vector<Arch> kept;
  for (const Arch& arch : row.archs)
    if (contains(p.archs, arch.name())) kept.push_back(arch);
  if (kept.empty()) return false;
  set_archs(row, std::move(kept));
  return true;
}

// An abi3 wheel builds with any Python it serves (Py_LIMITED_API pins the
// API to its tag's version), so build with the one the profile asks for: the
// default profile then builds and tests with the 3.12 of the target machine.
void prefer_pinned_python(const Profile& p, Row& row) {
  if (row.abi_mode != AbiMode::abi3) return;
  for (auto it = row.pythons.rbegin(); it != row.pythons.rend(); ++it)
    if (contains(p.pythons, *it)) {
      row.build_python = *it;
      return;
    }
}

// Per-interpreter rows of one package x torch x CUDA x platform differ only
// in Python; keep the newest. (An abi3 row already serves the newest.)
std::vector<Row> newest_python_only(std::vector<Row> rows) {
  std::map<std::tuple<std::string, TorchVersion, CudaVersion, std::string>, std::size_t> newest;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto key = std::make_tuple(rows[i].package, rows[i].torch, rows[i].cuda, rows[i].platform);
    auto [it, inserted] = newest.emplace(key, i);
    if (!inserted && rows[it->second].build_python < rows[i].build_python) it->second = i;
  }
  std::vector<Row> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto key = std::make_tuple(rows[i].package, rows[i].torch, rows[i].cuda, rows[i].platform);
    if (newest[key] == i) out.push_back(std::move(rows[i]));
  }
  return out;
}

// The rows of the `count` newest torch releases among `rows`.
std::vector<Row> newest_torch_only(std::vector<Row> rows, int count) {
  std::vector<TorchVersion> releases;
  for (const Row& row : rows)
    if (!contains(releases, row.torch)) releases.push_back(row.torch);
  std::sort(releases.begin(), releases.end());
  if (releases.size() > static_cast<std::size_t>(count)) releases.erase(releases.begin(), releases.end() - count);
  std::erase_if(rows, [&](const Row& row) { return !contains(releases, row.torch); });
  return rows;
}

std::vector<const TorchRelease*> pinned_torch(const Matrix& m, const Profile& p) {
  std::vector<const TorchRelease*> out;
  for (const auto& t : m.torch)
    if (p.torch.empty() || contains(p.torch, t.version)) out.push_back(&t);
  return out;
}

std::string torch_list(const std::vector<const TorchRelease*>& torch) {
  std::vector<std::string> names;
  for (const auto* t : torch) names.push_back(t->version.str());
  return join(names);
}

void check_cuda(const Matrix& m, const Profile& p, const ProfileSource& s) {
  if (p.torch.empty()) return;
  auto torch = pinned_torch(m, p);
  for (std::size_t i = 0; i < s.cuda.size(); ++i) {
    const Located& cuda = s.cuda[i];  // where p.cuda[i] is written
    bool shipped = std::any_of(torch.begin(), torch.end(), [&](const TorchRelease* t) {
      return std::any_of(t->variants.begin(), t->variants.end(),
                         [&](const TorchVariant& v) { return v.cuda == p.cuda[i]; });
    });
    if (shipped) continue;
    if (torch.size() == 1)
      throw ConfigError(cuda.where, "torch " + torch[0]->version.str() + " was never shipped for CUDA " + cuda.text +
                                        " (it ships for CUDA " + variant_list(*torch[0]) + "), but profile '" + p.name +
                                        "' pins both");
    throw ConfigError(cuda.where, "none of the torch releases profile '" + p.name + "' pins (" + torch_list(torch) +
                                      ") was shipped for CUDA " + cuda.text);
  }
}

void check_pythons(const Matrix& m, const Profile& p, const ProfileSource& s) {
  if (p.torch.empty()) return;
  auto torch = pinned_torch(m, p);
  for (std::size_t i = 0; i < s.pythons.size(); ++i) {
    const Located& python = s.pythons[i];  // where p.pythons[i] is written
    bool shipped = std::any_of(torch.begin(), torch.end(),
                               [&](const TorchRelease* t) { return contains(t->pythons, p.pythons[i]); });
    if (shipped) continue;
    if (torch.size() == 1)
      throw ConfigError(python.where, "torch " + torch[0]->version.str() + " has no wheels for Python " + python.text +
                                          " (it ships for Python " + join(python_versions(torch[0]->pythons)) +
                                          "), but profile '" + p.name + "' pins both");
    throw ConfigError(python.where, "none of the torch releases profile '" + p.name + "' pins (" + torch_list(torch) +
                                        ") has wheels for Python " + python.text);
  }
}

bool package_builds(const Package& package, const Arch& arch) {
  return contains_arch(package.archs, arch) || contains_arch(package.optional_archs, arch);
}

void check_arch_packages(const Matrix& m, const Profile& p, const Located& where, const Arch& arch) {
  for (const auto& package : m.packages)
    if ((p.packages.empty() || contains(p.packages, package.name)) && package_builds(package, arch)) return;
  throw ConfigError(where.where, "arch " + arch.name() + " is not built by any package profile '" + p.name +
                                     "' selects; a profile's archs narrow the packages' "
                                     "own (archs/optional_archs), they cannot add to them");
}

void check_archs(const Matrix& m, const Profile& p, const ProfileSource& s) {
  for (const Located& written : s.archs) {
    Arch arch = *parse_arch(written.text);  // the loader checked the syntax
    check_arch_packages(m, p, written, arch);
    for (const CudaVersion& cuda : p.cuda)
      if (!cuda_builds(*find_cuda(m, cuda), arch))
        throw ConfigError(written.where, "arch " + arch.name() + " " + cuda_requirement(m, arch) + ", but profile '" +
                                             p.name + "' pins CUDA " + cuda.release_str());
  }
}

void check_rows(const Matrix& m, const Profile& p, const ProfileSource& s) {
  std::vector<std::string> ids;
  for (const auto& row : m.rows) ids.push_back(row.id);
  for (const Located& id : s.rows)
    if (!contains(ids, id.text))
      throw ConfigError(id.where, "profile '" + p.name + "' names row '" + id.text + "', which is not a valid row" +
                                      did_you_mean(id.text, ids) +
                                      "; `sagebuild matrix --profile sage2-all` lists them");
}

}  // namespace

void check_profile(const Matrix& m, const Profile& p, const ProfileSource& s) {
  check_cuda(m, p, s);
  check_pythons(m, p, s);
  check_archs(m, p, s);
  check_rows(m, p, s);
  if (select_rows(m, p).empty())
    throw ConfigError(s.name.where, "profile '" + p.name +
                                        "' selects no rows: no valid row "
                                        "matches all of its filters (check them against the "
                                        "packages' min_* and platforms, and the exclusions)");
}

std::vector<Row> select_rows(const Matrix& m, const Profile& p) {
  std::vector<Row> rows;
  for (const Row& row : m.rows) {
    if (!p.rows.empty() ? !contains(p.rows, row.id) : !passes_filters(p, row)) continue;
    Row selected = row;
    if (!restrict_archs(p, selected)) continue;
    prefer_pinned_python(p, selected);
    rows.push_back(std::move(selected));
  }
  if (p.newest_python) rows = newest_python_only(std::move(rows));
  if (p.newest_torch > 0) rows = newest_torch_only(std::move(rows), p.newest_torch);
  return rows;
}

}  // namespace sb::matrix
