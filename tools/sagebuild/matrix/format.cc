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

// null for our own tree's rows.
nlohmann::json null_if_empty(const std::string& text) { return text.empty() ? nlohmann::json() : nlohmann::json(text); }

}  // namespace

nlohmann::json row_json(const Row& row) {
  nlohmann::json archs = nlohmann::json::array();
  for (const auto& arch : row.archs) archs.push_back(arch_json(arch));
  nlohmann::json pythons = nlohmann::json::array();
  for (const auto& python : row.pythons) pythons.push_back(python.str());
  return {{"id", row.id},
          {"package", row.package},
          {"project", row.project},
          {"source", row.source},
          {"version", row.version},
          {"abi_mode", to_string(row.abi_mode)},
          {"pythons", pythons},
          {"build_python", row.build_python.str()},
          {"python_tag", row.python_tag},
          {"abi_tag", row.abi_tag},
          {"torch", row.torch.str()},
          {"cuda", row.cuda.release_str()},
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
          {"kernels_manifest", row.kernels_manifest},
          {"upstream_repository", null_if_empty(row.upstream_repository)},
          {"upstream_commit", null_if_empty(row.upstream_commit)}};
}

namespace {

std::vector<Line> table_lines(const Plan& plan) {
  std::vector<Line> lines{{"ID", "PYTHON", "TORCH", "CUDA", "PLATFORM", "ARCHS", "TORCH FROM", "WHEEL"}};
  for (const Row& row : plan.rows)
    lines.push_back({row.id, row.python_span(), row.torch.str(), row.cuda.release_str(), row.platform, arch_names(row),
                     torch_source(row), row.wheel_filename});
  return lines;
}

}  // namespace

std::string format_table(const Plan& plan) { return render(table_lines(plan)) + summary(plan); }

std::string format_markdown(const Plan& plan) {
  std::vector<Line> lines = table_lines(plan);
  auto cell = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string out = summary(plan) + "\n|";
  for (const auto& h : lines.front()) out += " " + cell(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < kColumns; ++i) out += "---|";
  out += "\n";
  for (std::size_t k = 1; k < lines.size(); ++k) {
    out += "|";
    for (std::size_t i = 0; i < kColumns; ++i)
      out += " " + cell(i == 0 || i == 7 ? "`" + lines[k][i] + "`" : lines[k][i]) + " |";
    out += "\n";
  }
  return out;
}

std::string format_json(const Plan& plan) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& row : plan.rows) rows.push_back(row_json(row));
  return nlohmann::json{{"profile", plan.profile}, {"rows", rows}}.dump(2) + "\n";
}

std::string artifact_name(const Row& row) { return row.source == kOurSource ? "wheel-" + row.id : row.id; }

std::string kernel_group(const Row& row) {
  if (row.source != kOurSource) return "";
  std::vector<std::string> names;
  for (const auto& arch : row.archs) names.push_back(arch.name());
  return "kernels-" + row.platform + "-" + row.cuda_tag + "-" + join(names, "_");
}

std::string format_github(const Plan& plan, const CudaFromPypi& cuda_from_pypi) {
  nlohmann::json include = nlohmann::json::array();
  for (const Row& row : plan.rows)
    include.push_back({{"id", row.id},
                       {"os", row.runner_os},
                       {"command", "sagebuild --row " + row.id + " --out dist"},
                       {"package", row.package},
                       {"torch", row.torch.str()},
                       {"cuda", row.cuda.release_str()},
                       {"cuda_provision", cuda_from_pypi(row.cuda, row.platform) ? "pypi" : "install"},
                       {"torch_index", torch_index_json(row)},
                       {"python", row.build_python.str()},
                       {"wheel", row.wheel_filename},
                       {"artifact", artifact_name(row)},
                       {"upstream_repository", null_if_empty(row.upstream_repository)},
                       {"upstream_commit", null_if_empty(row.upstream_commit)},
                       {"kernel_group", kernel_group(row)}});
  // dump() without indent writes no newline at all, inside strings included.
  return nlohmann::json{{"include", include}}.dump();
}

namespace {

// 2.11.0 -> "211": major and minor digits, as the seeds' "pytorch28".
std::string torch_code(const TorchVersion& torch) { return std::to_string(torch.major) + std::to_string(torch.minor); }

std::string hcl_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '$' || c == '%') out += c;  // ${ and %{ start templates in HCL: doubled, they are literal
    out += c;
  }
  return out + "\"";
}

std::string hcl_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + hcl_string(items[i]);
  return out + "]";
}

}  // namespace

std::string bake_target_name(const Row& row) {
  std::string name = row.source == kOurSource ? "" : row.package + "-";
  name += "linux-pytorch" + torch_code(row.torch) + "-" + row.cuda_tag + "-";
  name += row.abi_mode == AbiMode::abi3 ? std::string("abi3") : "python" + row.python_tag.substr(2);
  return name;
}

std::string format_bake(const Plan& plan, const CudaFromPypi& cuda_from_pypi) {
  std::vector<std::string> all;
  std::vector<std::pair<std::string, std::vector<std::string>>> by_torch;  // in plan order
  std::string targets;
  for (const Row& row : plan.rows) {
    if (row.platform.rfind("linux_", 0) != 0) continue;
    std::string name = bake_target_name(row);
    all.push_back(name);
    std::string group = "pytorch" + torch_code(row.torch);
    auto it = std::find_if(by_torch.begin(), by_torch.end(), [&](const auto& g) { return g.first == group; });
    if (it == by_torch.end()) it = by_torch.insert(by_torch.end(), {group, {}});
    it->second.push_back(name);
    targets += "\ntarget " + hcl_string(name) + " {\n";
    targets += "  context    = \".\"\n";
    targets += "  dockerfile = \"docker/Dockerfile\"\n";
    targets += "  args = {\n";
    targets += "    ROW            = " + hcl_string(row.id) + "\n";
    targets += "    PYTHON         = " + hcl_string(row.build_python.str()) + "\n";
    targets += "    CUDA           = " + hcl_string(row.cuda.release_str()) + "\n";
    targets += "    CUDA_PROVISION = " + hcl_string(cuda_from_pypi(row.cuda, row.platform) ? "pypi" : "install") + "\n";
    targets += "    TORCH_INDEX    = " + hcl_string(row.torch_index) + "\n";
    targets += "  }\n";
    targets += "  output = [\"type=local,dest=dist\"]\n";
    targets += "}\n";
  }
  std::string out = "# docker-bake.hcl: `sagebuild matrix --profile " + plan.profile +
                    " --format bake` (do not edit; regenerate).\n"
                    "# One target per Linux row, each `sagebuild --row ID` in docker/Dockerfile\n"
                    "# (manylinux_2_28); the wheel lands in dist/.  docker buildx bake default\n";
  out += "\ngroup \"default\" {\n  targets = " + hcl_list(all) + "\n}\n";
  out += "\ngroup \"linux\" {\n  targets = " + hcl_list(all) + "\n}\n";
  for (const auto& [group, names] : by_torch)
    out += "\ngroup " + hcl_string(group) + " {\n  targets = " + hcl_list(names) + "\n}\n";
  return out + targets;
}

}  // namespace sb::matrix
