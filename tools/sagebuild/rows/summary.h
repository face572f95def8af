// The outcome of a build, per row: a table on stdout, the same in Markdown
// for $GITHUB_STEP_SUMMARY, and JSON for --json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::rows {

struct RowResult {
  std::string row_id;
  std::string torch, cuda, python, platform;  // the row's: "2.11.0", "13.0", "3.10-3.14", "linux_x86_64"
  bool ok = false;
  std::string stage;            // where it stopped: "toolchain", "compile", "pack", "verify", "smoke", "done"
  std::string error;            // why it failed (empty when ok)
  std::filesystem::path wheel;  // final path in --out (empty when failed)
  std::uint64_t size = 0;
  std::string sha256;
  std::vector<std::string> archs;
  std::vector<std::string> families;
  double seconds = 0;
  int kernels_cached = 0, kernels_compiled = 0;
  std::string smoke;                  // the smoke test's message
  std::vector<std::string> findings;  // verify findings, one line each
  std::string platform_tag;           // the wheel's platform tag, and for Linux why that level
};

std::string human_size(std::uint64_t bytes);                   // "2.3 MiB"
std::string format_table(const std::vector<RowResult>& rows);  // fixed-width text
// GitHub's job summary: torch, CUDA, Python, platform, wheel, time, result.
std::string format_markdown(const std::vector<RowResult>& rows);
nlohmann::json to_json(const std::vector<RowResult>& rows, const std::string& profile);

}  // namespace sb::rows
