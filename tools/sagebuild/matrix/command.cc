#include "sagebuild/matrix/command.h"
#include "sagebuild/matrix/yaml_reader.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <stdexcept>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/matrix/format.h"
#include "sagebuild/matrix/locate.h"
#include "sagebuild/matrix/matrix.h"

namespace sb::matrix {
namespace {

std::filesystem::path matrix_path(const MatrixOptions& options, const std::filesystem::path& cwd) {
  if (!options.matrix_file.empty()) return options.matrix_file;
  if (auto found = find_matrix_file(cwd)) return *found;
  throw UsageError(std::string("no ") + kDefaultMatrixPath + " in " + cwd.string() +
                   " or any parent directory; run from a sagebuild checkout or pass "
                   "--matrix FILE");
}

// Messages name the file as the user gave it, or, when it was found by
// searching upwards, relative to `cwd` ("../matrix/build-matrix.yaml:42:7").
std::string display_name(const MatrixOptions& options, const std::filesystem::path& path,
                         const std::filesystem::path& cwd) {
  if (!options.matrix_file.empty()) return options.matrix_file;
  std::filesystem::path relative = path.lexically_relative(std::filesystem::absolute(cwd));
  return relative.empty() ? path.string() : relative.string();
}

}  // namespace

std::string run_matrix(const MatrixOptions& options, const std::filesystem::path& cwd) {
  std::filesystem::path path = matrix_path(options, cwd);
  std::string name = display_name(options, path, cwd);
  Matrix matrix = parse_matrix(read_yaml_file(path, name), name);
  if (options.list_profiles) {
    std::string out;
    for (const auto& p : profile_names(matrix)) out += p + "\n";
    return out;
  }
  Plan plan = expand(matrix, options.profile);
  if (options.format == "json") return format_json(plan);
  if (options.format == "github") {
    if (!options.cuda_from_pypi) throw std::logic_error("run_matrix: --format github needs cuda_from_pypi");
    return format_github(plan, options.cuda_from_pypi) + "\n";
  }
  if (options.format == "table") return format_table(plan);
  if (options.format == "markdown") return format_markdown(plan);
  if (options.format == "bake") {
    if (!options.cuda_from_pypi) throw std::logic_error("run_matrix: --format bake needs cuda_from_pypi");
    return format_bake(plan, options.cuda_from_pypi);
  }
  throw UsageError("unknown --format '" + options.format + "'; use table, json, github, markdown or bake");
}

void add_matrix_command(CLI::App& app, sb::cli::Context& ctx, CudaFromPypi cuda_from_pypi) {
  auto options = std::make_shared<MatrixOptions>();
  options->cuda_from_pypi = std::move(cuda_from_pypi);
  CLI::App* cmd = app.add_subcommand("matrix", "Validate the build matrix and list the wheels a profile builds");
  cmd->add_option("--profile,-p", options->profile, "Profile to expand")->capture_default_str();
  cmd->add_option("--matrix", options->matrix_file,
                  "Matrix file (default: matrix/build-matrix.yaml here or in a parent directory)");
  cmd->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "github", "markdown", "bake"}))
      ->capture_default_str();
  cmd->add_flag("--list-profiles", options->list_profiles,
                "Print the profile names, one a line (the workflow's manual-run choices)");
  cmd->callback([options, &ctx] {
    std::string out = run_matrix(*options, std::filesystem::current_path());
    std::fwrite(out.data(), 1, out.size(), stdout);
    ctx.exit_code = 0;
  });
}

}  // namespace sb::matrix
