// The three output formats, and the command that chooses among them.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "sagebuild/matrix/command.h"
#include "sagebuild/matrix/format.h"
#include "sagebuild/matrix/test_support.h"

using namespace sb::matrix;
using namespace sb::matrix::testing;

namespace {
const Matrix& real() {
  static const Matrix m = load_matrix(real_matrix_path());
  return m;
}

// A stand-in for the toolchain's rule (toolchain/cuda.h), which this unit does
// not link: here CUDA 13 comes from PyPI on Linux and nothing else does (the
// Windows build only finds a toolkit, as the real rule says).
bool only_13(const CudaVersion& cuda, const std::string& platform) {
  return platform.rfind("linux_", 0) == 0 && cuda.major == 13;
}
}  // namespace

TEST_CASE("github format: one line of JSON, one include entry per row") {
  for (const char* profile : {"default", "sage2-all", "sage3-all"}) {
    Plan plan = expand(real(), profile);
    std::string out = format_github(plan, only_13);
    CHECK(out.find('\n') == std::string::npos);
    auto json = nlohmann::json::parse(out);
    REQUIRE(json["include"].size() == plan.rows.size());
    for (std::size_t i = 0; i < plan.rows.size(); ++i) {
      const auto& entry = json["include"][i];
      const Row& row = plan.rows[i];
      CHECK(entry["id"] == row.id);
      CHECK(entry["os"] == row.runner_os);
      CHECK(entry["command"] == "sagebuild --row " + row.id + " --out dist");
      CHECK(entry["package"] == row.package);
      CHECK(entry["torch"] == row.torch.str());
      CHECK(entry["cuda"] == row.cuda.release_str());
      CHECK(entry["cuda_provision"] == (only_13(row.cuda, row.platform) ? "pypi" : "install"));
      if (row.pypi_buildable)
        CHECK(entry["torch_index"].is_null());
      else
        CHECK(entry["torch_index"] == "https://download.pytorch.org/whl/" + row.cuda_tag);
      CHECK(entry["python"] == row.build_python.str());
      CHECK(entry["wheel"] == row.wheel_filename);
      if (row.source == "ours") {
        CHECK(entry["artifact"] == "wheel-" + row.id);
        CHECK(entry["upstream_repository"].is_null());
        CHECK(entry["upstream_commit"].is_null());
        CHECK(entry["kernel_group"] == kernel_group(row));
        CHECK(entry["kernel_group"].get<std::string>().rfind("kernels-" + row.platform + "-" + row.cuda_tag + "-", 0) ==
              0);
      } else {
        CHECK(entry["artifact"] == row.id);
        CHECK(entry["upstream_repository"] == row.upstream_repository);
        CHECK(entry["upstream_commit"] == row.upstream_commit);
        CHECK(entry["kernel_group"] == "");
      }
      CHECK(entry.size() == 14);
    }
  }
}

TEST_CASE("github format: cuda_provision asks the rule it is given, per row's CUDA and platform") {
  Plan plan = expand(real(), "sage2-all");
  std::set<std::string> asked, platforms;
  auto rule = [&](const CudaVersion& cuda, const std::string& platform) {
    asked.insert(cuda.release_str());
    platforms.insert(platform);
    return cuda == CudaVersion{12, 8} && platform == "linux_x86_64";
  };
  auto json = nlohmann::json::parse(format_github(plan, rule));
  std::set<std::string> pypi, install;
  for (const auto& entry : json["include"])
    if (entry["os"] != "windows-2022")
      (entry["cuda_provision"] == "pypi" ? pypi : install).insert(entry["cuda"].get<std::string>());
    else
      CHECK(entry["cuda_provision"] == "install");
  CHECK(pypi == std::set<std::string>{"12.8"});
  CHECK(install == std::set<std::string>{"12.4", "12.6", "12.9", "13.0", "13.2"});
  CHECK(asked == std::set<std::string>{"12.4", "12.6", "12.8", "12.9", "13.0", "13.2"});
  CHECK(platforms == std::set<std::string>{"linux_x86_64", "win_amd64"});
}

TEST_CASE("github format: sageattn3's artifacts are prefixed sageattn3-, and name upstream's checkout") {
  auto json = nlohmann::json::parse(format_github(expand(real(), "sage3"), only_13));
  REQUIRE(json["include"].size() == 4);
  for (const auto& entry : json["include"]) {
    CHECK(entry["artifact"].get<std::string>().rfind("sageattn3-1.0.0-torch2.9.0-", 0) == 0);
    CHECK(entry["upstream_repository"] == "thu-ml/SageAttention");
    CHECK(entry["upstream_commit"] == "d1a57a546c3d395b1ffcbeecc66d81db76f3b4b5");
  }
  auto ours = nlohmann::json::parse(format_github(expand(real(), "default"), only_13));
  CHECK(ours["include"][0]["artifact"] == "wheel-sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64");
}

TEST_CASE("github format: kernel_group names our rows by platform, CUDA and archs; upstream rows have none") {
  Plan plan = expand(real(), "sage2-all");
  std::map<std::string, std::set<std::string>> keys;  // group -> "platform cuda archs"
  for (const Row& row : plan.rows) {
    std::string archs;
    for (const auto& arch : row.archs) archs += arch.name() + " ";
    keys[kernel_group(row)].insert(row.platform + " " + row.cuda.release_str() + " " + archs);
  }
  CHECK(keys.size() > 1);
  for (const auto& [group, members] : keys) CHECK(members.size() == 1);
  Row row = plan.rows.front();
  row.platform = "linux_x86_64";
  row.cuda_tag = "cu130";
  row.archs = {sb::Arch{80, false}, sb::Arch{90, true}};
  CHECK(kernel_group(row) == "kernels-linux_x86_64-cu130-8.0_9.0a");
  for (const Row& r : expand(real(), "sage3").rows) CHECK(kernel_group(r).empty());
}

TEST_CASE("github format: the default row builds with the profile's Python") {
  auto json = nlohmann::json::parse(format_github(expand(real(), "default"), only_13));
  CHECK(json["include"][0]["python"] == "3.12");
  CHECK(json["include"][0]["os"] == "ubuntu-22.04");
}

TEST_CASE("json format carries every row field") {
  Plan plan = expand(real(), "default");
  auto json = nlohmann::json::parse(format_json(plan));
  CHECK(json["profile"] == "default");
  REQUIRE(json["rows"].size() == 1);
  const auto& r = json["rows"][0];
  CHECK(r["id"] == "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64");
  CHECK(r["abi_mode"] == "abi3");
  CHECK(r["naming"] == "build-tag");
  CHECK(r["python_tag"] == "cp310");
  CHECK(r["abi_tag"] == "abi3");
  CHECK(r["pythons"].size() == 5);
  CHECK(r["archs"][0]["arch"] == "8.0");
  CHECK(r["archs"][0]["sm"] == 80);
  CHECK(r["archs"][0]["arch_specific"] == false);
  CHECK(r["ptx_arch"] == "12.0");
  CHECK(r["pypi_buildable"] == true);
  CHECK(r["requires_python"] == ">=3.10");
  CHECK(r["torch_binding"] == "stable-abi");
  CHECK(r["torch_requirement"] == "torch>=2.10,<3");
  CHECK(r["wheel_filename"] == "sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl");
  CHECK(r["kernels_manifest"] == "kernels/families.json");
  CHECK(r["source"] == "ours");
  CHECK(r["project"] == "sageattention");
  CHECK(r["pypi_variant"] == true);
  CHECK(r["torch_index"].is_null());
  CHECK(r["upstream_repository"].is_null());
  CHECK(r["upstream_commit"].is_null());
  CHECK(r.size() == 31);
}

TEST_CASE("table format: aligned columns and a summary") {
  Plan plan = expand(real(), "pytorch26");
  std::string out = format_table(plan);
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = out.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(out.substr(start, end - start));
  REQUIRE(lines.size() == plan.rows.size() + 2);
  CHECK(lines[0].rfind("ID", 0) == 0);
  // Every column starts at the same offset on every line.
  std::size_t wheel_at = lines[0].find("WHEEL");
  for (std::size_t i = 1; i <= plan.rows.size(); ++i)
    CHECK(lines[i].substr(wheel_at) == plan.rows[i - 1].wheel_filename);
  CHECK(lines[1].find(" 3.9-3.13 ") != std::string::npos);
  std::size_t from_at = lines[0].find("TORCH FROM");
  CHECK(lines[1].substr(from_at, 5) == "PyPI ");  // 2.6.0's cu124 build is PyPI's
  CHECK(lines[2].substr(from_at, 31) == "download.pytorch.org/whl/cu126 ");
  CHECK(lines.back() == "profile 'pytorch26': 2 rows, 1 buildable with torch from PyPI alone");
}

TEST_CASE("the command finds the matrix from a subdirectory and formats it") {
  MatrixOptions options;
  options.format = "github";
  // The rule is required for github output; the CLI always hands one in.
  CHECK_THROWS_AS(run_matrix(options, SAGEBUILD_SOURCE_DIR), std::logic_error);
  options.cuda_from_pypi = only_13;
  std::string out = run_matrix(options, std::filesystem::path(SAGEBUILD_SOURCE_DIR) / "tools");
  CHECK(out.back() == '\n');
  CHECK(nlohmann::json::parse(out)["include"].size() == 1);
  CHECK(nlohmann::json::parse(out)["include"][0]["cuda_provision"] == "pypi");
  options.format = "yaml";
  CHECK_THROWS_AS(run_matrix(options, SAGEBUILD_SOURCE_DIR), sb::UsageError);
  options.format = "table";
  options.profile = "nope";
  // Named relative to where the command runs, as the user would type it.
  // (With the host's separator: '\\' on Windows.)
  auto named = [](std::filesystem::path p) { return p.make_preferred().string(); };
  CHECK_THROWS_WITH(run_matrix(options, std::filesystem::path(SAGEBUILD_SOURCE_DIR) / "tools"),
                    Catch::StartsWith(named("../matrix/build-matrix.yaml") + ": error: unknown profile 'nope'"));
  CHECK_THROWS_WITH(run_matrix(options, SAGEBUILD_SOURCE_DIR),
                    Catch::StartsWith(named("matrix/build-matrix.yaml") + ": error: unknown profile 'nope'"));
  // A file given with --matrix is named as given.
  options.matrix_file = write_temp("cli.yaml", "profile: 1\n").string();
  CHECK_THROWS_WITH(run_matrix(options, SAGEBUILD_SOURCE_DIR),
                    options.matrix_file +
                        ":1:1: error: unknown key 'profile' in the build "
                        "matrix (did you mean 'profiles'?); allowed keys: pythons, platforms, cuda, torch, upstream, "
                        "packages, exclude, profiles");
  options.matrix_file = "/nonexistent/build-matrix.yaml";
  CHECK_THROWS_AS(run_matrix(options, SAGEBUILD_SOURCE_DIR), sb::UsageError);
}

TEST_CASE("markdown format: the summary, then the table's columns as a Markdown table") {
  Plan plan = expand(real(), "pytorch26");
  std::string out = format_markdown(plan);
  CHECK(out.rfind("profile 'pytorch26': 2 rows, 1 buildable with torch from PyPI alone\n\n", 0) == 0);
  CHECK(out.find("| ID | PYTHON | TORCH | CUDA | PLATFORM | ARCHS | TORCH FROM | WHEEL |\n"
                 "|---|---|---|---|---|---|---|---|\n") != std::string::npos);
  CHECK(out.find("| `" + plan.rows[0].id + "` | 3.9-3.13 | 2.6.0 | ") != std::string::npos);
  CHECK(out.find("| `" + plan.rows[1].wheel_filename + "` |\n") != std::string::npos);
  CHECK(out.back() == '\n');
}

TEST_CASE("matrix --list-profiles prints every profile name, one a line, in file order") {
  MatrixOptions options;
  options.list_profiles = true;
  std::string out = run_matrix(options, SAGEBUILD_SOURCE_DIR);
  std::string expected;
  for (const auto& p : profile_names(real())) expected += p + "\n";
  CHECK(out == expected);
  CHECK(out.rfind("default\ndefault-windows\n", 0) == 0);
}

TEST_CASE("bake: target names as the seeds name them") {
  Plan plan = expand(real(), "pytorch211");
  const Row& linux_row = *std::find_if(plan.rows.begin(), plan.rows.end(), [](const Row& r) {
    return r.platform == "linux_x86_64" && r.cuda == CudaVersion{13, 0};
  });
  CHECK(bake_target_name(linux_row) == "linux-pytorch211-cu130-abi3");
  Plan sage3 = expand(real(), "sage3-all");
  for (const Row& r : sage3.rows)
    if (r.platform == "linux_x86_64" && r.torch.str() == "2.9.0" && r.cuda == CudaVersion{12, 8} &&
        r.build_python.str() == "3.12")
      CHECK(bake_target_name(r) == "sageattn3-linux-pytorch29-cu128-python312");
}

TEST_CASE("bake: one target per Linux row, groups default, linux and one per torch release") {
  Plan plan = expand(real(), "stable");
  std::string out = format_bake(plan, only_13);
  std::size_t linux_rows =
      std::count_if(plan.rows.begin(), plan.rows.end(), [](const Row& r) { return r.platform == "linux_x86_64"; });
  std::size_t targets = 0;
  for (std::size_t at = 0; (at = out.find("\ntarget \"", at)) != std::string::npos; ++at) ++targets;
  CHECK(targets == linux_rows);
  CHECK(out.find("group \"default\" {") != std::string::npos);
  CHECK(out.find("group \"linux\" {") != std::string::npos);
  CHECK(out.find("win_amd64") == std::string::npos);  // Windows stays native
  for (const Row& r : plan.rows)
    if (r.platform == "linux_x86_64") {
      CHECK(out.find("ROW            = \"" + r.id + "\"") != std::string::npos);
      CHECK(out.find("group \"pytorch" + std::to_string(r.torch.major) + std::to_string(r.torch.minor) + "\"") !=
            std::string::npos);
    }
}
