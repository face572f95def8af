// build_windows_rows on Linux: the real matrix row, families.json and Python
// package, facts written by hand (what discovery would find on a Windows
// runner), and a fake runner standing in for ninja that writes the _C.pyd
// link.exe would.  What is real: the plan, build.ninja, staging, the packed
// wheel and verify reading it.  What is not: every compile and the link.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <unistd.h>

#include "sagebuild/plan/kernel_manifest.h"
#include "sagebuild/rows/pipeline.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/matrix/matrix.h"

using namespace sb::rows;
namespace fs = std::filesystem;

namespace {

const char* kRowId = "sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64";

WindowsRowInput real_row() {
  fs::path src = SAGEBUILD_SOURCE_DIR;
  auto m = sb::matrix::load_matrix(src / "matrix/build-matrix.yaml");
  const sb::matrix::Row* row = sb::matrix::find_row(m, kRowId);
  REQUIRE(row);
  WindowsRowInput in{*row, load_kernel_manifest(src / row->kernels_manifest), {}};
  auto& f = in.facts;
  f.cuda_path = R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8)";
  f.nvcc = f.cuda_path + R"(\bin\nvcc.exe)";
  f.nvcc_version = "12.8.93";
  f.cl = R"(C:\VS\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64\cl.exe)";
  f.link = R"(C:\VS\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64\link.exe)";
  f.msvc_version = "14.44.35207";
  f.torch_root = R"(C:\py\Lib\site-packages\torch)";
  f.torch_version = "2.7.1+cu128";
  f.torch_cuda = "12.8";
  f.python_include = R"(C:\py\Include)";
  f.python_lib_dir = R"(C:\py\libs)";
  return in;
}

// ninja's stand-in: on `ninja -C <work> ... <row>` writes the bytes link.exe
// would have written to each _C.pyd that build.ninja names; on `ninja -n`
// answers as ninja does for a finished target.
struct FakeNinja : ProcessRunner {
  std::vector<Command> seen;
  std::string pyd_bytes = "not a PE image";
  int exit_code = 0;
  Result run(const Command& c) override {
    seen.push_back(c);
    if (c.argv.size() > 3 && c.argv[0] == "ninja" && c.argv[3] == "-n")
      return Result{0, exit_code == 0 ? "ninja: no work to do.\n" : "[1/3] nvcc ...\n", "", true, 0};
    if (c.argv.empty() || c.argv[0] != "ninja") return Result{-1, "", "not faked", false, 0};
    std::string text = sb::read_file(fs::path(c.argv[2]) / "build.ninja");
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      auto pyd = line.find("\\_C.pyd: run ");
      if (line.rfind("build ", 0) != 0 || pyd == std::string::npos) continue;
      std::string path = line.substr(6, pyd + 7 - 6);
      std::string unescaped;
      for (std::size_t i = 0; i < path.size(); ++i) {
        if (path[i] == '$') ++i;
        unescaped += path[i];
      }
      if (exit_code == 0) std::ofstream(native_path(unescaped), std::ios::binary) << pyd_bytes;
    }
    return Result{exit_code, "", exit_code ? "FAILED: link" : "", true, 0};
  }
};

WindowsBuildSettings settings_in(const fs::path& dir) {
  WindowsBuildSettings s;
  s.source_dir = SAGEBUILD_SOURCE_DIR;
  s.cache_dir = dir / "cache";
  s.work_dir = dir / "work";
  s.out_dir = dir / "dist";
  s.jobs = 2;
  s.source_revision = "test";
  return s;
}

}  // namespace

TEST_CASE("windows build: build.ninja, ninja through the runner, pack, verify (fake ninja)") {
  fs::path dir = fs::temp_directory_path() / ("sb-winbuild-rows-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  FakeNinja ninja;
  std::ostringstream out;
  auto results = build_windows_rows({real_row()}, settings_in(dir), ninja, out);
  INFO(out.str());
  REQUIRE(results.size() == 1);
  const auto& res = results[0];
  INFO(res.error);

  // build.ninja holds CreateProcess command lines of the real families.json.
  std::string text = sb::read_file(dir / "work/build.ninja");
  CHECK(text.find(R"(cmd = "C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\bin\nvcc.exe" -c )") !=
        std::string::npos);
  CHECK(text.find(R"(\kernels\binding\ops.cc)") != std::string::npos);
  CHECK(text.find(R"(\lib\x64\cudart_static.lib)") != std::string::npos);
  CHECK(text.find("&& mv") == std::string::npos);
  CHECK(text.find("build " + std::string(kRowId) + ": phony ") != std::string::npos);
  REQUIRE_FALSE(ninja.seen.empty());
  CHECK(ninja.seen[0].argv ==
        std::vector<std::string>{"ninja", "-C", (dir / "work").string(), "-j", "2", kRowId});
  CHECK(ninja.seen[0].stream_output);

  // Packed as the matrix names it, then verified: the stand-in _C.pyd is no
  // PE image, and verify says so, so no wheel reaches --out.
  CHECK_FALSE(res.ok);
  CHECK(res.stage == "verify");
  CHECK(res.error.find("verify found problems") != std::string::npos);
  CHECK(res.error.find("P8 error [sageattention/_C.pyd]: not a PE image") != std::string::npos);
  CHECK(res.families == std::vector<std::string>{"pv_fp16", "pv_fp8", "quant", "sm90"});
  CHECK_FALSE(fs::exists(dir / "dist"));
  CHECK(fs::is_empty(dir / "work/rows" / kRowId / "dist"));
  fs::remove_all(dir);
}

TEST_CASE("windows build: a failed ninja fails the row at compile, nothing packed") {
  fs::path dir = fs::temp_directory_path() / ("sb-winbuild-fail-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  FakeNinja ninja;
  ninja.exit_code = 1;
  std::ostringstream out;
  auto results = build_windows_rows({real_row()}, settings_in(dir), ninja, out);
  REQUIRE(results.size() == 1);
  CHECK(results[0].stage == "compile");
  CHECK(results[0].error.find("compile or link failed") != std::string::npos);
  REQUIRE(ninja.seen.size() == 2);
  CHECK(ninja.seen[1].argv.back() == kRowId);  // asked which rows ninja finished
  CHECK_FALSE(fs::exists(dir / "dist"));
  fs::remove_all(dir);
}

TEST_CASE("windows build: refuses placeholder facts and reports a missing ninja by name") {
  fs::path dir = fs::temp_directory_path() / ("sb-winbuild-refuse-" + std::to_string(::getpid()));
  WindowsRowInput in = real_row();
  in.facts = placeholder_windows_facts();
  FakeNinja ninja;
  std::ostringstream out;
  CHECK_THROWS_WITH(build_windows_rows({in}, settings_in(dir), ninja, out), Catch::Contains("placeholders"));
  WindowsBuildSettings s = settings_in(dir);
  s.ninja = "ninja-not-there";
  CHECK_THROWS_WITH(build_windows_rows({real_row()}, s, ninja, out),
                    Catch::Contains("cannot run ninja-not-there") && Catch::Contains("pip install ninja"));
  fs::remove_all(dir);
}

TEST_CASE("windows path strings round-trip through native paths") {
  CHECK(native_path(windows_path_string("/tmp/a b/c.pyd")) == fs::path("/tmp/a b/c.pyd"));
  CHECK(windows_path_string("/tmp/x") == R"(\tmp\x)");
}
