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

#include "sagebuild/common/os.h"
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

// Runs `sagebuild verify [--json] wheel` under sb_peak_rss (see there why).
Run verify(const fs::path& wheel, bool json) {
  fs::path peak = fs::temp_directory_path() / ("sb-hostile-peak-" + std::to_string(sb::process_id()));
  std::vector<std::string> argv = {SAGEBUILD_PEAK_RSS, peak.string(), SAGEBUILD_CLI, "verify"};
  if (json) argv.push_back("--json");
  argv.push_back(wheel.string());
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
      CHECK(j[0]["errors"].get<int>() > 0);
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
    if (e.path().extension() == ".whl") {
      std::string label = e.path().parent_path().filename().string();
      SECTION(label) { check_bounded_report(label, e.path(), ""); }
      ++n;
    }
  CHECK(n >= 9);
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
