// A win_amd64 row's CUDA, found on Linux through a fake runner
// (msvc_test_support.h): --cuda-home, CUDA_PATH_V<x>_<y>, CUDA_PATH, and for
// CUDA 13 NVIDIA's win_amd64 wheels on PyPI, in the cache or through pip.
// Nothing of it has run on a Windows machine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "sagebuild/archive/zip_test_util.h"
#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/run/win_path.h"
#include "sagebuild/toolchain/msvc_resolver.h"
#include "sagebuild/toolchain/msvc_test_support.h"

using namespace sb::toolchain;
using namespace sb::toolchain::testing;
namespace fs = std::filesystem;

TEST_CASE("windows CUDA of a row: --cuda-home, CUDA_PATH_V<x>_<y>, CUDA_PATH, then PyPI's wheels for CUDA 13") {
  FakeRunner r;
  WindowsToolchainFacts vs = vs_facts(r);  // CUDA_PATH and CUDA_PATH_V12_8: CUDA 12.8 installed
  r.answers[R"(D:\CUDA\v12.8\bin\nvcc.exe)"] = Result{0, kNvcc128, "", true, 0};
  r.answers[R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\bin\nvcc.exe)"] =
      Result{0, kNvcc128, "", true, 0};
  r.answers[R"(E:\cache\cuda\13.0\bin\nvcc.exe)"] = Result{0, kNvcc130, "", true, 0};
  std::vector<std::string> provisioned;
  WindowsCudaProvisioner pypi = [&](const sb::matrix::CudaVersion& cuda) {
    provisioned.push_back(cuda.release_str());
    return std::string(R"(E:\cache\cuda\)") + cuda.release_str();
  };

  // Only CUDA 12.8 is installed: a CUDA 13.0 row takes PyPI's, once.
  WindowsToolchainFacts f = vs;
  find_windows_cuda(r, f, win_row_130(), std::nullopt, pypi);
  CHECK(provisioned == std::vector<std::string>{"13.0"});
  CHECK(f.cuda_path == R"(E:\cache\cuda\13.0)");
  CHECK(f.nvcc == R"(E:\cache\cuda\13.0\bin\nvcc.exe)");
  CHECK(f.nvcc_version == "13.0.88");
  CHECK(f.cuda_origin == "cache (PyPI wheels)");
  // Without a provisioner (a CUDA PyPI lacks) CUDA_PATH's other release is an error.
  f = vs;
  CHECK_THROWS_WITH(find_windows_cuda(r, f, win_row_130(), std::nullopt),
                    Catch::Contains("is CUDA 12.8.93") && Catch::Contains("needs CUDA 13.0"));

  // An installed CUDA 13.0 comes first: CUDA_PATH_V13_0, then CUDA_PATH.
  provisioned.clear();
  f = vs;
  f.env["CUDA_PATH_V13_0"] = R"(F:\CUDA\v13.0)";
  r.answers[R"(F:\CUDA\v13.0\bin\nvcc.exe)"] = Result{0, kNvcc130, "", true, 0};
  find_windows_cuda(r, f, win_row_130(), std::nullopt, pypi);
  CHECK(f.cuda_path == R"(F:\CUDA\v13.0)");
  CHECK(f.cuda_origin == "CUDA_PATH_V13_0");
  f = vs;
  f.cuda_path = R"(F:\CUDA\v13.0)";
  find_windows_cuda(r, f, win_row_130(), std::nullopt, pypi);
  CHECK(f.cuda_origin == "CUDA_PATH");
  CHECK(provisioned.empty());

  // --cuda-home is a demand: used, and judged, whatever PyPI has.
  f = vs;
  CHECK_THROWS_WITH(find_windows_cuda(r, f, win_row_130(), std::string(R"(D:\CUDA\v12.8)"), pypi),
                    Catch::Contains("needs CUDA 13.0"));
  CHECK(provisioned.empty());

  // A CUDA_PATH whose nvcc does not answer makes way for PyPI's too.
  f = vs;
  f.cuda_path = R"(G:\broken)";
  find_windows_cuda(r, f, win_row_130(), std::nullopt, pypi);
  CHECK(f.cuda_origin == "cache (PyPI wheels)");

  // Nothing installed and nothing to provision with: the error names both variables.
  f = vs;
  f.cuda_path.clear();
  f.env.erase("CUDA_PATH_V12_8");
  CHECK_THROWS_WITH(find_windows_cuda(r, f, win_row(), std::nullopt),
                    Catch::Contains("neither CUDA_PATH_V12_8 nor CUDA_PATH is set") && Catch::Contains("--cuda-home"));

  // What was provisioned must be the row's CUDA.
  r.answers[R"(E:\cache\cuda\13.0\bin\nvcc.exe)"] =
      Result{0, "Cuda compilation tools, release 13.2, V13.2.86\r\n", "", true, 0};
  f = vs;
  CHECK_THROWS_WITH(find_windows_cuda(r, f, win_row_130(), std::nullopt, pypi), Catch::Contains("is CUDA 13.2.86"));
}

TEST_CASE("MsvcResolver for a CUDA 13 row off Windows: the dry run plans the cache's toolkit, downloads nothing") {
  FakeRunner r;
  ToolchainOptions o;
  o.plan_only = true;
  o.provision = false;
  MsvcResolver dry(r, o, std::nullopt);
  RowToolchain tc = dry.resolve(win_row_130(), std::nullopt);
  CHECK(tc.placeholders);
  CHECK(r.seen.empty());
  CompileJob cu;
  cu.kind = SourceKind::cuda;
  CHECK(tc.host->compile_command(cu).front() == R"(<CACHE_DIR>\cuda\13.0\bin\nvcc.exe)");
  CHECK(sb::run::to_backslashes(tc.cuda_lib.string()) == R"(<CACHE_DIR>\cuda\13.0\lib\x64)");
  // The workflow's toolkit, when it names one, wins; a CUDA 12 row keeps <CUDA_PATH>.
  o.cuda_home = R"(C:\CUDA\v13.0)";
  CHECK(MsvcResolver(r, o, std::nullopt).resolve(win_row_130(), std::nullopt).host->compile_command(cu).front() ==
        R"(C:\CUDA\v13.0\bin\nvcc.exe)");
  o.cuda_home.reset();
  CHECK(MsvcResolver(r, o, std::nullopt).resolve(win_row(), std::nullopt).host->compile_command(cu).front() ==
        R"(<CUDA_PATH>\bin\nvcc.exe)");
}

TEST_CASE("MsvcResolver for a CUDA 13 row on a Windows host: the cache's toolkit, else pip for win_amd64") {
  fs::path cache = fs::temp_directory_path() / ("sb-msvc-cuda-" + std::to_string(sb::process_id()));
  fs::remove_all(cache);
  FakeRunner r;
  vs_facts(r);  // CUDA 12.8 installed only
  r.answers["python"] = Result{0, python_answer("2.11.0+cu130", "13.0"), "", true, 0};
  // vcvars64's runner (which runs nvcc and pip) answers from, and records into, `r`.
  struct Forward : sb::run::ProcessRunner {
    FakeRunner& to;
    explicit Forward(FakeRunner& t) : to(t) {}
    Result run(const Command& c) override { return to.run(c); }
  };
  auto host = [&] {
    return MsvcResolver::Host{R"(C:\Program Files (x86))", [&](sb::run::Environment) {
                                return std::unique_ptr<sb::run::ProcessRunner>(std::make_unique<Forward>(r));
                              }};
  };
  ToolchainOptions o;
  o.cache_dir = cache;
  const std::string entry = (cache / "cuda" / "13.0").string();
  const std::string nvcc = sb::run::win_join(entry, "bin\\nvcc.exe");

  SECTION("a build with an empty cache asks the build Python's pip for the win_amd64 wheels") {
    // No pip answers here: the error names PyPI, the platform and the fix.
    r.answers.erase("python");
    MsvcResolver build(r, o, host());
    CHECK_THROWS_WITH(
        build.resolve(win_row_130(), std::nullopt),
        Catch::Contains("cannot download CUDA 13.0 for win_amd64 from PyPI") && Catch::Contains("--cuda-home"));
    const Command* pip = nullptr;
    for (const auto& c : r.seen)
      if (c.argv.size() > 3 && c.argv[1] == "-m" && c.argv[2] == "pip") pip = &c;
    REQUIRE(pip);
    std::string argv;
    for (const auto& a : pip->argv) argv += a + " ";
    CHECK(argv.find("python -m pip download --no-deps --only-binary=:all: ") == 0);
    CHECK(argv.find("--platform win_amd64 nvidia-cuda-nvcc==13.0.* nvidia-cuda-runtime==13.0.* "
                    "nvidia-cuda-cccl==13.0.* nvidia-cuda-crt==13.0.* nvidia-nvvm==13.0.*") != std::string::npos);
    CHECK(argv.find("manylinux") == std::string::npos);
    CHECK_FALSE(fs::exists(entry));  // nothing half-made left in the cache
  }
  SECTION("a dry run with an empty cache plans the cache's toolkit and downloads nothing") {
    o.plan_only = true;
    o.provision = false;
    MsvcResolver dry(r, o, host());
    RowToolchain tc = dry.resolve(win_row_130(), std::nullopt);
    for (const auto& c : r.seen) CHECK_FALSE((c.argv.size() > 2 && c.argv[2] == "pip"));
    CompileJob cu;
    cu.kind = SourceKind::cuda;
    CHECK(tc.host->compile_command(cu).front() == nvcc);
    bool said = false;
    for (const auto& c : tc.checks)
      if (c.what == "CUDA 13.0") {
        said = true;
        CHECK(c.ok);
        CHECK(c.found.find("not in the cache " + entry) != std::string::npos);
        CHECK(c.found.find("win_amd64 wheels of CUDA 13.0 from PyPI") != std::string::npos);
      }
    CHECK(said);
    // doctor: the same, as something a build downloads (not ok, "not in the cache").
    o.plan_only = false;
    auto checks = MsvcResolver(r, o, host()).diagnose(win_row_130());
    auto it = std::find_if(checks.begin(), checks.end(), [](const Check& c) { return c.what == "CUDA 13.0"; });
    REQUIRE(it != checks.end());
    CHECK_FALSE(it->ok);
    CHECK(it->found == "not in the cache " + entry);
  }
  SECTION("a provisioned toolkit in the cache is used as it is, without pip") {
    fs::create_directories(fs::path(entry) / "bin");
    sb::write_file_atomic(fs::path(entry) / "bin" / "nvcc.exe", "");
    r.answers[nvcc] = Result{0, kNvcc130, "", true, 0};
    MsvcResolver build(r, o, host());
    RowToolchain tc = build.resolve(win_row_130(), std::nullopt);
    CHECK_FALSE(tc.placeholders);
    CHECK(tc.nvcc_version == "13.0.88");
    for (const auto& c : r.seen) CHECK_FALSE((c.argv.size() > 2 && c.argv[2] == "pip"));
    bool said = false;
    for (const auto& c : tc.checks)
      if (c.what == "CUDA 13.0") said = c.ok && c.found == nvcc + " 13.0.88 (cache (PyPI wheels))";
    CHECK(said);
  }
  fs::remove_all(cache);
}
