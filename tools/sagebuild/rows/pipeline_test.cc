// The row pipeline, one suite run for both host toolchains: the real matrix
// row, families.json and Python package, toolchain facts written by hand, and
// a fake runner standing in for ninja that writes each row's extension as
// the link would.  What is real: the plan, build.ninja, staging, the packed
// wheel and verify reading it.  What is not: every compile and the link.
#include <catch2/catch.hpp>

#include <fstream>
#include <memory>
#include <sstream>

#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/pipeline.h"
#include "sagebuild/run/ninja.h"
#include "sagebuild/toolchain/gnu_toolchain.h"
#include "sagebuild/toolchain/msvc_toolchain.h"

using namespace sb::rows;
namespace fs = std::filesystem;
using sb::run::Command;
using sb::run::Result;

namespace {

struct Case {
  std::string row_id;
  std::shared_ptr<sb::toolchain::HostToolchain> host;
  std::string not_a_binary;  // what verify says of the stand-in extension
};

Case each_case() {
  return GENERATE(
      Case{"sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64",
           std::make_shared<sb::toolchain::GnuToolchain>(
               sb::toolchain::GnuTools{"/cuda/bin/nvcc", "13.0.88", "/usr/bin/g++", {"gcc", "12.2.0"}}),
           "P8 error [sageattention/_C.abi3.so]: not an ELF image"},
      Case{"sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64",
           std::make_shared<sb::toolchain::MsvcToolchain>(sb::toolchain::MsvcTools{
               R"(C:\CUDA\v12.8\bin\nvcc.exe)", "12.8.93", R"(C:\VS\bin\cl.exe)", R"(C:\VS\bin\link.exe)", "14.44"}),
           "P8 error [sageattention/_C.pyd]: not a PE image"});
}

struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("sb-pipeline-" + std::to_string(sb::process_id()));
  sb::plan::RowInput input;
  Fixture(const Case& c) {
    fs::remove_all(dir);
    fs::path src = SAGEBUILD_SOURCE_DIR;
    auto m = sb::matrix::load_matrix(src / "matrix/build-matrix.yaml");
    const sb::matrix::Row* row = sb::matrix::find_row(m, c.row_id);
    REQUIRE(row);
    auto manifest = sb::plan::load_kernel_manifest(src / row->kernels_manifest);
    sb::toolchain::RowToolchain tc;
    tc.host = c.host;
    tc.nvcc_version = "13.0.88";
    tc.cuda_include = dir / "cuda/include";
    tc.cuda_lib = dir / "cuda/lib";
    tc.torch = {dir / "torch", row->torch.str() + "+" + row->cuda_tag, true};
    tc.row_torch_cuda = row->cuda.release_str();
    tc.python_include = dir / "py/include";
    tc.python_lib_dir = dir / "py/libs";
    tc.python_version = "3.12";
    input = {*row,
             sb::plan::extension_from_families(manifest, *row),
             tc,
             {src, dir / "cache/objects", dir / "cache/extensions", dir / "work", {}}};
  }
  ~Fixture() { fs::remove_all(dir); }
  PipelineSettings settings() const {
    return {SAGEBUILD_SOURCE_DIR, dir / "work", dir / "dist", 2, false, false, "test"};
  }
};

sb::plan::PlanSettings plan_settings() {
  sb::plan::PlanSettings s;
  s.repo_root = SAGEBUILD_SOURCE_DIR;
  return s;
}

// ninja's stand-in: on `ninja -C <work> ... <row>` writes stand-in bytes to
// each row's extension that build.ninja names; `ninja -n` answers as ninja
// does for a finished target.
struct FakeNinja : sb::run::ProcessRunner {
  std::vector<Command> seen;
  int exit_code = 0;
  Result run(const Command& c) override {
    seen.push_back(c);
    if (c.argv.empty() || c.argv[0] != "ninja") return Result{-1, "", "not faked", false, 0};
    if (c.argv.size() > 3 && c.argv[3] == "-n") return Result{0, "[1/3] nvcc ...\n", "", true, 0};
    std::istringstream lines(sb::read_file(fs::path(c.argv[2]) / "build.ninja"));
    for (std::string line; std::getline(lines, line);) {
      auto phony = line.find(": phony ");
      if (line.rfind("build ", 0) != 0 || phony == std::string::npos || exit_code) continue;
      std::string path, escaped = line.substr(phony + 8);
      for (std::size_t i = 0; i < escaped.size(); ++i) path += escaped[i] == '$' ? escaped[++i] : escaped[i];
      fs::create_directories(fs::path(path).parent_path());
      std::ofstream(path, std::ios::binary) << "not a binary";
    }
    return Result{exit_code, "", exit_code ? "FAILED: link" : "", true, 0};
  }
};

}  // namespace

TEST_CASE("every toolchain: build.ninja, ninja through the build runner, pack, verify (fake ninja)") {
  Case c = each_case();
  Fixture fx(c);
  auto graph = sb::plan::plan_compile({fx.input}, plan_settings());
  RowResult res;
  res.row_id = c.row_id;
  FakeNinja ninja;
  std::ostringstream out;
  run_rows(graph, {fx.input}, {&res}, fx.settings(), ninja, ninja, out);
  INFO(out.str() << res.error);
  // build.ninja holds every edge's command: the compile and the rename.
  std::string text = sb::read_file(fx.dir / "work/build.ninja");
  for (const auto& e : graph.edges) CHECK(text.find(sb::run::ninja_escape_value(e.command)) != std::string::npos);
  CHECK(text.find("build " + c.row_id + ": phony ") != std::string::npos);
  REQUIRE_FALSE(ninja.seen.empty());
  CHECK(ninja.seen[0].argv == std::vector<std::string>{"ninja", "-C", (fx.dir / "work").string(), "-j", "2", c.row_id});
  CHECK(ninja.seen[0].stream_output);
  // Packed as the matrix names it, then verified: the stand-in extension is
  // no binary, and verify says so, so no wheel reaches --out.
  CHECK_FALSE(res.ok);
  CHECK(res.stage == "verify");
  CHECK(res.error.find("verify found problems") != std::string::npos);
  CHECK(res.error.find(c.not_a_binary) != std::string::npos);
  CHECK(res.families == std::vector<std::string>{"pv_fp16", "pv_fp8", "quant", "sm90"});
  CHECK_FALSE(fs::exists(fx.dir / "dist"));
  CHECK(fs::is_empty(fx.dir / "work/rows" / c.row_id / "dist"));
}

TEST_CASE("every toolchain: a failed ninja fails the row at compile, nothing packed") {
  Case c = each_case();
  Fixture fx(c);
  auto graph = sb::plan::plan_compile({fx.input}, plan_settings());
  RowResult res;
  FakeNinja ninja;
  ninja.exit_code = 1;
  std::ostringstream out;
  run_rows(graph, {fx.input}, {&res}, fx.settings(), ninja, ninja, out);
  CHECK(res.stage == "compile");
  CHECK(res.error.find("compile or link failed") != std::string::npos);
  REQUIRE(ninja.seen.size() == 2);
  CHECK(ninja.seen[1].argv.back() == c.row_id);  // asked which rows ninja finished
  CHECK_FALSE(fs::exists(fx.dir / "dist"));
}

TEST_CASE("every toolchain: placeholder facts never build") {
  Case c = each_case();
  Fixture fx(c);
  fx.input.toolchain.placeholders = true;
  auto graph = sb::plan::plan_compile({fx.input}, plan_settings());
  RowResult res;
  FakeNinja ninja;
  std::ostringstream out;
  run_rows(graph, {fx.input}, {&res}, fx.settings(), ninja, ninja, out);
  CHECK_FALSE(res.ok);
  CHECK(res.error.find("placeholders") != std::string::npos);
}
