// `sagebuild verify` (the real program, as a child process) on hostile
// wheels: every one gets a complete report (exit 1: findings, never 2 or a
// signal), in bounded time and memory, as text and as JSON.  The bounds are
// loose enough for a loaded 2-core machine and tight enough to catch what
// these inputs once cost (minutes, gigabytes: ../shared/fuzz-findings/README.md).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "sagebuild/archive/zip_test_util.h"
#include "sagebuild/common/os.h"
#include "sagebuild/common/shared_dir_test.h"
#include "sagebuild/fuzz/hostile_wheels.h"
#include "sagebuild/run/process.h"

namespace fs = std::filesystem;

namespace {

constexpr long kMaxRssKiB = 256 * 1024;
constexpr double kMaxSeconds = 10;

struct Run {
  int exit_code = -1;  // -1: killed by a signal
  double seconds = 0;
  long max_rss_kib = 0;
  std::string out, err;
};

// Runs `sagebuild ARGS...` under sb_peak_rss (see there why).
Run run_measured(const std::vector<std::string>& args) {
  fs::path peak = fs::temp_directory_path() / ("sb-hostile-peak-" + std::to_string(sb::process_id()));
  std::vector<std::string> argv = {SAGEBUILD_PEAK_RSS, peak.string(), SAGEBUILD_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  auto start = std::chrono::steady_clock::now();
  sb::run::Result child = sb::run::HostProcessRunner().run(sb::run::Command(argv));
  Run r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int code = -1;
  if (std::FILE* f = std::fopen(peak.string().c_str(), "r")) {
    if (std::fscanf(f, "%ld %d", &r.max_rss_kib, &code) != 2) code = -1;
    std::fclose(f);
  }
  fs::remove(peak);
  r.exit_code = code > 127 ? -1 : code;
  r.out = std::move(child.out);
  r.err = child.spawned ? std::move(child.err) : "sb_peak_rss could not be started: " + child.err;
  return r;
}

// `sagebuild verify [--json] wheel`, measured.
Run verify(const fs::path& wheel, bool json) {
  std::vector<std::string> args = {"verify"};
  if (json) args.push_back("--json");
  args.push_back(wheel.string());
  return run_measured(args);
}

// Valid wheels among the findings: verify once refused them wrongly.
bool valid_finding(const fs::path& wheel) { return wheel.parent_path().filename() == "verify-false-truncated-deflate"; }

// The contract for one wheel, both formats.
void check_bounded_report(const std::string& label, const fs::path& wheel, const std::string& expect) {
  for (bool json : {false, true}) {
    Run r = verify(wheel, json);
    std::printf("%-40s %-6s exit %d %6.2f s %5ld MiB\n", label.c_str(), json ? "--json" : "text", r.exit_code,
                r.seconds, r.max_rss_kib / 1024);
    INFO(wheel.string() << (json ? " --json" : "") << ": exit " << r.exit_code << ", " << r.seconds << " s, "
                        << r.max_rss_kib / 1024 << " MiB\nstderr: " << r.err.substr(0, 2000)
                        << "\nstdout: " << r.out.substr(0, 3000));
    CHECK(r.exit_code == 1);
    CHECK(r.err.empty());
    CHECK(r.seconds < kMaxSeconds);
    CHECK(r.max_rss_kib < kMaxRssKiB);
    if (json) {
      auto j = nlohmann::json::parse(r.out, nullptr, false);
      REQUIRE(j.is_array());
      REQUIRE(j.size() == 1);
      CHECK(j[0]["ok"] == false);
      // A failing finding, an error or a strict one (a binary the platform
      // tag cannot cover is strict: P1).
      CHECK(j[0]["errors"].get<int>() + j[0]["strict"].get<int>() > 0);
      CHECK_FALSE(j[0]["findings"].empty());
    } else {
      CHECK(r.out.find(wheel.string() + ": FAIL (") != std::string::npos);
      if (!expect.empty()) CHECK(r.out.find(expect) != std::string::npos);
    }
  }
}

}  // namespace

TEST_CASE("hostile wheels generated here: a complete report in bounded time and memory") {
  fs::path dir = fs::temp_directory_path() / ("sb-hostile-" + std::to_string(sb::process_id()));
  for (const auto& w : sb::fuzz::hostile_wheels()) {
    SECTION(w.label) {
      fs::create_directories(dir);
      fs::path path = dir / w.filename;
      std::ofstream(path, std::ios::binary) << w.bytes;
      check_bounded_report(w.label, path, w.expect);
      fs::remove_all(dir);
    }
  }
}

TEST_CASE("the fuzz findings (../shared/fuzz-findings): a complete report in bounded time and memory") {
  fs::path findings = SAGEBUILD_FUZZ_FINDINGS_DIR;
  std::error_code ec;
  if (!fs::is_directory(findings, ec)) {
    // a line CTest's SKIP_REGULAR_EXPRESSION reports as "Skipped" (common/corpus_test.h)
    std::cout << "SKIPPED: no fuzz findings at " << findings.string()
              << " (../shared beside the checkout, or -DSAGEBUILD_SHARED_DIR=DIR); CI runs this test\n";
    return;
  }
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(findings))
    if (e.path().extension() == ".whl" && !valid_finding(e.path())) {
      std::string label = e.path().parent_path().filename().string();
      SECTION(label) { check_bounded_report(label, e.path(), ""); }
      ++n;
    }
  CHECK(n >= 10);
}

TEST_CASE("the fuzz findings: a valid wheel Python's zipfile wrote passes verify") {
  fs::path dir = fs::path(SAGEBUILD_FUZZ_FINDINGS_DIR) / "verify-false-truncated-deflate";
  SB_SKIP_WITHOUT_SHARED_DIR(dir);
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".whl") continue;
    Run r = verify(e.path(), false);
    INFO(r.out << r.err);
    CHECK(r.out.find(" Z2 ") == std::string::npos);
    CHECK(r.out.find(": OK (0 errors, 0 strict") != std::string::npos);
    CHECK(r.exit_code == 0);
  }
}

namespace {

// `sagebuild index` on hostile input: a clear error (exit 2) in bounded time
// and memory, and nothing written outside --out.
void check_index_refuses(const std::string& label, const std::vector<std::string>& args, const std::string& says) {
  Run r = run_measured(args);
  std::printf("%-40s index  exit %d %6.2f s %5ld MiB\n", label.c_str(), r.exit_code, r.seconds, r.max_rss_kib / 1024);
  INFO(label << ": exit " << r.exit_code << "\nstderr: " << r.err.substr(0, 2000)
             << "\nstdout: " << r.out.substr(0, 2000));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("sagebuild: error: ") && Catch::Contains(says));
  CHECK(r.seconds < 2.0 * 2);  // 2 s, doubled for a loaded 2-core machine
  CHECK(r.max_rss_kib < kMaxRssKiB);
}

}  // namespace

TEST_CASE("index: hostile --previous manifests and wheels are refused, nothing written outside --out") {
  fs::path root = fs::temp_directory_path() / ("sb-hostile-index-" + std::to_string(sb::process_id()));
  fs::remove_all(root);
  fs::create_directories(root / "dist" / "deep");
  fs::create_directories(root / "dist" / "good");
  fs::path regressions = fs::path(SAGEBUILD_SOURCE_DIR) / "tools/sagebuild/fuzz/regressions";
  std::vector<fs::path> manifests;
  for (const auto& e : fs::directory_iterator(regressions / "previous")) manifests.push_back(e.path());
  fs::path shared = fs::path(SAGEBUILD_FUZZ_FINDINGS_DIR) / "index-previous-traversal";
  std::error_code ec;
  if (fs::is_directory(shared, ec))
    for (const auto& e : fs::directory_iterator(shared)) manifests.push_back(e.path());
  REQUIRE(manifests.size() >= 7);
  fs::copy_file(regressions / "index/build-info-100k-deep.whl",
                root / "dist/deep/sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl");
  // (A wheel index accepts: torch and CUDA from its build tag.)
  std::ofstream(root / "dist/good/sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl", std::ios::binary)
      << sb::zip::testing::build_zip({{sb::zip::testing::member("sageattention/__init__.py", "")}});
  for (const auto& m : manifests) {
    fs::path out = root / "a" / "b" / "site";
    check_index_refuses(m.filename().string(),
                        {"index", (root / "dist/good").string(), "--out", out.string(), "--previous", m.string()},
                        m.string() + ": ");
    CHECK_FALSE(fs::exists(root / "a"));
  }
  check_index_refuses("build-info-100k-deep.whl",
                      {"index", (root / "dist/deep").string(), "--out", (root / "site").string()},
                      "nested deeper than 32 levels");
  CHECK_FALSE(fs::exists(root / "site"));
  fs::path deep = fs::path(SAGEBUILD_FUZZ_FINDINGS_DIR) / "index-deep-build-info-crash";
  if (fs::is_directory(deep, ec))
    check_index_refuses("index-deep-build-info-crash", {"index", deep.string(), "--out", (root / "site").string()},
                        "nested deeper than 32 levels");
  // Operator input: URLs that would run script or shell text, an --out that is a file.
  check_index_refuses("--wheels-url javascript:",
                      {"index", (root / "dist/deep").string(), "--out", (root / "site").string(), "--wheels-url",
                       "javascript:alert(1)"},
                      "--wheels-url 'javascript:alert(1)': ");
  check_index_refuses("--base-url with a quote",
                      {"index", (root / "dist/deep").string(), "--out", (root / "site").string(), "--base-url",
                       "https://x.example/\"; rm -rf ~; \""},
                      "--base-url 'https://x.example/\"; rm -rf ~; \"': contains '\"'");
  std::ofstream(root / "file") << "x";
  check_index_refuses("--out a file", {"index", (root / "dist/deep").string(), "--out", (root / "file").string()},
                      "exists and is not a directory");
  check_index_refuses("--out \"\"", {"index", (root / "dist/deep").string(), "--out", ""},
                      "--out: expected a directory");
  // A folder holding a manifest.json among other files is not a site: left as it is.
  fs::create_directories(root / "mine");
  std::ofstream(root / "mine" / "manifest.json") << "{}";
  std::ofstream(root / "mine" / "notes.txt") << "keep";
  Run r = run_measured({"index", (root / "dist/good").string(), "--out", (root / "mine").string()});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("without .sagebuild-site"));
  CHECK(fs::exists(root / "mine" / "notes.txt"));
  // The same wheel into a new folder: a site with its marker, which a second run replaces.
  r = run_measured({"index", (root / "dist/good").string(), "--out", (root / "site").string()});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(root / "site" / ".sagebuild-site"));
  CHECK(run_measured({"index", (root / "dist/good").string(), "--out", (root / "site").string()}).exit_code == 0);
  fs::remove_all(root);
}

TEST_CASE("one unreadable file among good ones: every report is printed, JSON stays one valid array") {
  fs::path dir = fs::temp_directory_path() / ("sb-hostile-mixed-" + std::to_string(sb::process_id()));
  fs::create_directories(dir);
  auto wheels = sb::fuzz::hostile_wheels();
  fs::path a = dir / wheels[0].filename;
  std::ofstream(a, std::ios::binary) << wheels[0].bytes;
  fs::path missing = dir / "missing-1.0-py3-none-any.whl";
  sb::run::Result r = sb::run::HostProcessRunner().run(
      sb::run::Command({SAGEBUILD_CLI, "verify", "--json", a.string(), missing.string(), a.string()}));
  CHECK(r.exit_code == 2);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 3);
  CHECK(j[0]["findings"].size() > 0);
  CHECK(j[1]["error"].get<std::string>().find("no such file") != std::string::npos);
  CHECK(j[2]["findings"].size() > 0);
  fs::remove_all(dir);
}

TEST_CASE("the fuzz findings (2026-11-28): a matrix expanding to 10^6 rows is refused in 2 s and 256 MiB") {
  fs::path yaml = fs::path(SAGEBUILD_FUZZ_FINDINGS_DIR) / "matrix-row-product-1e6" / "build-matrix.yaml";
  std::error_code ec;
  if (!fs::is_regular_file(yaml, ec)) {
    std::cout << "SKIPPED: no " << yaml.string()
              << " (../shared beside the checkout, or -DSAGEBUILD_SHARED_DIR=DIR); CI runs this test\n";
    return;
  }
  for (const char* format : {"table", "json", "github"}) {
    Run r = run_measured({"matrix", "--matrix", yaml.string(), "--format", format});
    std::printf("%-40s %-6s exit %d %6.2f s %5ld MiB\n", "matrix-row-product-1e6", format, r.exit_code, r.seconds,
                r.max_rss_kib / 1024);
    INFO(format << ": exit " << r.exit_code << ", " << r.seconds << " s, " << r.max_rss_kib / 1024
                << " MiB\nstderr: " << r.err.substr(0, 2000));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("more than 10000 rows before exclusions") != std::string::npos);
    CHECK(r.err.find("internal error") == std::string::npos);
    CHECK(r.out.empty());
    CHECK(r.seconds < 2);
    CHECK(r.max_rss_kib < kMaxRssKiB);
  }
}
