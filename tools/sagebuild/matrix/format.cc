#include "sagebuild/matrix/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "sagebuild/matrix/suggest.h"

namespace sb::matrix {
namespace {

nlohmann::json arch_json(const Arch& arch) {
  return {{"arch", arch.name()}, {"sm", arch.sm}, {"arch_specific", arch.arch_specific}};
}

std::string arch_names(const Row& row) {
  std::vector<std::string> names;
  for (const auto& arch : row.archs) names.push_back(arch.name());
  return join(names, ",");
}

// "PyPI", or the index without its scheme ("download.pytorch.org/whl/cu130").
std::string torch_source(const Row& row) {
  if (row.torch_index.empty()) return "PyPI";
  auto scheme = row.torch_index.find("://");
  return scheme == std::string::npos ? row.torch_index : row.torch_index.substr(scheme + 3);
}

// "3.12", or "3.10-3.14" for an abi3 row serving a run of Pythons.
std::string python_span(const Row& row) {
  if (row.pythons.size() == 1) return row.pythons.front();
  return row.pythons.front() + "-" + row.pythons.back();
}

constexpr std::size_t kColumns = 8;
using Line = std::array<std::string, kColumns>;

std::string render(const std::vector<Line>& lines) {
  std::array<std::size_t, kColumns> width{};
  for (const auto& line : lines)
    for (std::size_t i = 0; i < kColumns; ++i) width[i] = std::max(width[i], line[i].size());
  std::string out;
  for (const auto& line : lines) {
    std::string text;
    for (std::size_t i = 0; i < kColumns; ++i)
      text += i + 1 < kColumns ? fmt::format("{:<{}}  ", line[i], width[i]) : line[i];
    out += text + "\n";
  }
  return out;
}

std::string summary(const Plan& plan) {
  std::size_t pypi = std::count_if(plan.rows.begin(), plan.rows.end(), [](const Row& r) { return r.pypi_buildable; });
  return fmt::format("profile '{}': {} row{}, {} buildable with torch from PyPI alone\n", plan.profile,
                     plan.rows.size(), plan.rows.size() == 1 ? "" : "s", pypi);
}

// null: PyPI; else the index URL.
nlohmann::json torch_index_json(const Row& row) {
  return row.torch_index.empty() ? nlohmann::json() : nlohmann::json(row.torch_index);
}

}  // namespace

nlohmann::json row_json(const Row& row) {
  nlohmann::json archs = nlohmann::json::array();
  for (const auto& arch : row.archs) archs.push_back(arch_json(arch));
  return {{"id", row.id},
          {"package", row.package},
          {"project", row.project},
          {"source", row.source},
          {"version", row.version},
          {"abi_mode", to_string(row.abi_mode)},
          {"pythons", row.pythons},
          {"build_python", row.build_python},
          {"python_tag", row.python_tag},
          {"abi_tag", row.abi_tag},
          {"torch", row.torch},
          {"cuda", row.cuda},
          {"cuda_tag", row.cuda_tag},
          {"platform", row.platform},
          {"runner_os", row.runner_os},
          {"archs", archs},
          {"ptx_arch", row.ptx_arch ? nlohmann::json(row.ptx_arch->name()) : nlohmann::json()},
          {"naming", to_string(row.naming)},
          {"build_tag", row.build_tag},
          {"local_version", row.local_version},
          {"wheel_version", row.wheel_version},
          {"wheel_filename", row.wheel_filename},
          {"requires_python", row.requires_python},
          {"torch_binding", row.torch_binding == wheel::TorchBinding::stable_abi ? "stable-abi" : "classic"},
          {"torch_requirement", row.torch_requirement},
          {"pypi_buildable", row.pypi_buildable},
          {"pypi_variant", row.pypi_variant},
          {"torch_index", torch_index_json(row)},
          {"kernels_manifest", row.kernels_manifest}};
}

std::string format_table(const Plan& plan) {
  std::vector<Line> lines{{"ID", "PYTHON", "TORCH", "CUDA", "PLATFORM", "ARCHS", "TORCH FROM", "WHEEL"}};
  for (const Row& row : plan.rows)
    lines.push_back({row.id, python_span(row), row.torch, row.cuda, row.platform, arch_names(row), torch_source(row),
                     row.wheel_filename});
  return render(lines) + summary(plan);
}

std::string format_json(const Plan& plan) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& row : plan.rows) rows.push_back(row_json(row));
  return nlohmann::json{{"profile", plan.profile}, {"rows", rows}}.dump(2) + "\n";
}

std::string format_github(const Plan& plan, const CudaFromPypi& cuda_from_pypi) {
  nlohmann::json include = nlohmann::json::array();
  for (const Row& row : plan.rows)
    include.push_back({{"id", row.id},
                       {"os", row.runner_os},
                       {"command", "sagebuild --row " + row.id + " --out dist"},
                       {"package", row.package},
                       {"torch", row.torch},
                       {"cuda", row.cuda},
                       {"cuda_provision", cuda_from_pypi(row.cuda, row.platform) ? "pypi" : "install"},
                       {"torch_index", torch_index_json(row)},
                       {"python", row.build_python},
                       {"wheel", row.wheel_filename}});
  // dump() without indent writes no newline at all, inside strings included.
  return nlohmann::json{{"include", include}}.dump();
}

}  // namespace sb::matrix
