#include <catch2/catch.hpp>

#include "sagebuild/rows/summary.h"

using namespace sb::rows;

namespace {
std::vector<RowResult> sample() {
  RowResult ok;
  ok.row_id = "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64";
  ok.torch = "2.11.0";
  ok.cuda = "13.0";
  ok.python = "3.10-3.14";
  ok.platform = "linux_x86_64";
  ok.ok = true;
  ok.stage = "done";
  ok.wheel = "/out/sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl";
  ok.size = 3 * 1048576 + 300000;
  ok.archs = {"8.0", "9.0a"};
  ok.seconds = 61.25;
  RowResult bad;
  bad.row_id = "sageattention-2.2.0-torch2.10.0-cu128-abi3-linux_x86_64";
  bad.stage = "toolchain";
  bad.error = "nvcc 13.0.88, the row needs CUDA 12.8 | pipe";
  bad.archs = {"8.0"};
  return {ok, bad};
}
}  // namespace

TEST_CASE("sizes are human-readable") {
  CHECK(human_size(0) == "0 B");
  CHECK(human_size(1536) == "1.5 KiB");
  CHECK(human_size(3 * 1048576 + 300000) == "3.3 MiB");
}

TEST_CASE("the text table aligns columns and explains failures") {
  auto t = format_table(sample());
  CHECK(t.find("row") == 0);
  CHECK(t.find("sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl  3.3 MiB") != std::string::npos);
  CHECK(t.find("FAILED (toolchain)") != std::string::npos);
  CHECK(t.find("61.2s") != std::string::npos);
  CHECK(t.find("the row needs CUDA 12.8") != std::string::npos);
}

TEST_CASE("the markdown table: torch, CUDA, Python, platform, wheel, time, result, pipes escaped") {
  auto m = format_markdown(sample());
  CHECK(m.find("| torch | CUDA | Python | platform | wheel | time | result |\n|---|---|---|---|---|---|---|\n") == 0);
  CHECK(
      m.find("| 2.11.0 | 13.0 | 3.10-3.14 | linux_x86_64 | `sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl`"
             " | 61.2s | ok |") != std::string::npos);
  // A failed row names itself where its wheel would be, and why it failed.
  CHECK(m.find("| `sageattention-2.2.0-torch2.10.0-cu128-abi3-linux_x86_64` | 0.0s | FAILED (toolchain) |") !=
        std::string::npos);
  CHECK(m.find("\\| pipe") != std::string::npos);
}

TEST_CASE("JSON has one object per row and the overall result") {
  auto j = to_json(sample(), "default");
  CHECK(j["profile"] == "default");
  CHECK(j["ok"] == false);
  REQUIRE(j["rows"].size() == 2);
  CHECK(j["rows"][0]["size"] == 3 * 1048576 + 300000);
  CHECK(j["rows"][1]["stage"] == "toolchain");
}
