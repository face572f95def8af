// `sagebuild build` end to end where no process is needed: a win_amd64 row on
// a host that is not Windows (a dry run plans it with placeholders; a build
// refuses it by name before any work).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "sagebuild/common/os.h"
#include "sagebuild/rows/build.h"
#include "sagebuild/rows/preflight.h"
#include "sagebuild/toolchain/host.h"
#include "sagebuild/toolchain/provision.h"

using namespace sb::rows;
namespace fs = std::filesystem;
using sb::run::Command;
using sb::run::Result;

namespace {

struct NoRunner : sb::run::ProcessRunner {
  int calls = 0;
  Result run(const Command&) override {
    ++calls;
    return Result{-1, "", "no processes in this test", false, 0};
  }
};

BuildOptions win_options(bool dry_run, const fs::path& cache) {
  BuildOptions o;
  o.rows = {"sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64"};
  o.source_dir = SAGEBUILD_SOURCE_DIR;
  o.cache_dir = cache;
  o.out_dir = cache / "dist";
  o.launcher = "none";
  o.dry_run = dry_run;
  o.jobs = 1;
  return o;
}

}  // namespace

TEST_CASE("sagebuild build --dry-run plans a win_amd64 row on Linux with placeholders") {
  if (sb::toolchain::host_platform_tag() == "win_amd64") return;  // a Windows host discovers instead
  fs::path cache = fs::temp_directory_path() / ("sb-winplan-" + std::to_string(sb::process_id()));
  NoRunner r;
  std::ostringstream out;
  int rc = run_build(win_options(true, cache), r, out);
  std::string s = out.str();
  INFO(s);
  CHECK(rc == 0);
  CHECK(r.calls == 0);
  CHECK(s.find("Windows (win_amd64) plan") != std::string::npos);
  CHECK(s.find(R"(cmd.exe /d /s /c ""<CUDA_PATH>\bin\nvcc.exe" -c "<SOURCE_DIR>\kernels\src\)") != std::string::npos);
  CHECK(s.find(R"(-ccbin "<VCToolsInstallDir>\bin\Hostx64\x64" "-std=c++17" -Xcompiler /O2 -Xcompiler /MD)") !=
        std::string::npos);
  CHECK(s.find(R"("<VCToolsInstallDir>\bin\Hostx64\x64\cl.exe" /nologo /c "<SOURCE_DIR>\kernels\binding\ops.cc")") !=
        std::string::npos);
  CHECK(s.find("&& move /y ") != std::string::npos);
  CHECK(s.find(R"(\_C.pyd)") != std::string::npos);
  CHECK(s.find(R"(<PYTHON_PREFIX>\libs\python3.lib)") != std::string::npos);
  CHECK(s.find(R"(<CUDA_PATH>\lib\x64\cudart_static.lib)") != std::string::npos);  // families.json: "cudart": "static"
  CHECK(s.find("-allow-unsupported-compiler") == std::string::npos);
  CHECK(s.find(".obj") != std::string::npos);
  CHECK(s.find("-fPIC") == std::string::npos);
  CHECK(s.find(cache.string()) == s.find("cache " + cache.string()) + 6);  // no Linux path in the commands
  fs::remove_all(cache);
}

TEST_CASE("sagebuild build --dry-run of a CUDA 13 win_amd64 row on Linux plans PyPI's toolkit in the cache") {
  if (sb::toolchain::host_platform_tag() == "win_amd64") return;
  fs::path cache = fs::temp_directory_path() / ("sb-winplan13-" + std::to_string(sb::process_id()));
  BuildOptions o = win_options(true, cache);
  o.rows = {"sageattention-2.2.0-torch2.11.0-cu130-abi3-win_amd64"};
  NoRunner r;
  std::ostringstream out;
  int rc = run_build(o, r, out);
  std::string s = out.str();
  INFO(s);
  CHECK(rc == 0);
  CHECK(r.calls == 0);  // nothing downloaded, nothing run
  // No toolkit installed by the workflow: nvcc.exe and cudart_static.lib
  // where `build` unpacks NVIDIA's win_amd64 wheels, under the cache.
  CHECK(s.find(R"(cmd.exe /d /s /c ""<CACHE_DIR>\cuda\13.0\bin\nvcc.exe" -c ")") != std::string::npos);
  CHECK(s.find(R"(<CACHE_DIR>\cuda\13.0\lib\x64\cudart_static.lib)") != std::string::npos);
  CHECK(s.find("<CUDA_PATH>") == s.find("<CUDA_PATH> (%CUDA_PATH%)"));  // only in the legend
  fs::remove_all(cache);
}

TEST_CASE("sagebuild build of a win_amd64 row on Linux fails by name before any work") {
  if (sb::toolchain::host_platform_tag() == "win_amd64") return;
  fs::path cache = fs::temp_directory_path() / ("sb-winbuild-" + std::to_string(sb::process_id()));
  NoRunner r;
  std::ostringstream out;
  int rc = run_build(win_options(false, cache), r, out);
  std::string s = out.str();
  INFO(s);
  CHECK(rc == 1);
  CHECK(s.find("needs a Windows host with Visual Studio") != std::string::npos);
  CHECK(s.find("and the CUDA 12.8 toolkit") != std::string::npos);  // PyPI has no nvcc for CUDA 12
  CHECK(s.find("nvcc") == std::string::npos);
  CHECK_FALSE(fs::exists(cache / "dist"));
  fs::remove_all(cache);
}

TEST_CASE("a row's torch comes from --torch-index, else the row's own index, else pip's") {
  sb::toolchain::ToolchainOptions opt;
  sb::matrix::Row row;
  const char* was = std::getenv("PIP_INDEX_URL");
  std::optional<std::string> saved = was ? std::optional<std::string>(was) : std::nullopt;
  sb::set_environment_variable("PIP_INDEX_URL", std::nullopt);
  CHECK(sb::toolchain::torch_index_for(opt, row) == "https://pypi.org/simple");
  row.torch_index = "https://download.pytorch.org/whl/cu126";
  CHECK(sb::toolchain::torch_index_for(opt, row) == "https://download.pytorch.org/whl/cu126");
  opt.torch_index = "https://mirror.example/whl/cu126/";
  CHECK(sb::toolchain::torch_index_for(opt, row) == "https://mirror.example/whl/cu126");
  sb::set_environment_variable("PIP_INDEX_URL", saved);
}

TEST_CASE("doctor --preprocess reads the missing header out of each compiler's words") {
  auto gcc = find_missing_header(
      "In file included from /t/torch/include/ATen/cuda/CUDAContext.h:3,\n"
      "                 from /src/api.cu:5:\n"
      "/t/torch/include/ATen/cuda/CUDAContextLight.h:7:10: fatal error: cusparse.h: No such file or directory\n"
      "    7 | #include <cusparse.h>\n");
  REQUIRE(gcc);
  CHECK(gcc->header == "cusparse.h");
  CHECK(gcc->included_from == "/t/torch/include/ATen/cuda/CUDAContextLight.h:7");
  auto clang = find_missing_header("/src/a.cu:2:10: fatal error: 'cublas_v2.h' file not found\n");
  REQUIRE(clang);
  CHECK(clang->header == "cublas_v2.h");
  auto msvc = find_missing_header(
      "C:\\t\\CUDAContextLight.h(7): fatal error C1083: Cannot open include file: 'cusparse.h': No such file or "
      "directory\n");
  REQUIRE(msvc);
  CHECK(msvc->header == "cusparse.h");
  CHECK_FALSE(find_missing_header("/src/a.cu:3:1: error: expected ';' before '}' token\n"));
}

TEST_CASE("what provides a missing header, for the row's CUDA") {
  using sb::matrix::CudaVersion;
  using sb::toolchain::header_provider;
  CHECK(header_provider("cublas_v2.h", CudaVersion{13, 0}) ==
        "provided by the nvidia-cublas wheel (CUDA 13.0; `cuda_libraries: [cublas]` in the tree's source manifest "
        "provisions its headers) / a full CUDA toolkit's libcublas-dev-13-0");
  CHECK(header_provider("cusolverDn.h", CudaVersion{12, 8}).find("nvidia-cusolver-cu12 wheel") != std::string::npos);
  CHECK(header_provider("cutlass/cutlass.h", CudaVersion{13, 0}).find("nvidia-cutlass") != std::string::npos);
  CHECK(header_provider("Python.h", CudaVersion{13, 0}).find("python3-dev") != std::string::npos);
  CHECK(header_provider("ATen/ATen.h", CudaVersion{13, 0}).find("torch wheel") != std::string::npos);
  CHECK(header_provider("cuda_fp8.h", CudaVersion{12, 8}).find("CUDA 12.8 toolkit") != std::string::npos);
  CHECK(header_provider("my_own.h", CudaVersion{13, 0}).empty());
}

TEST_CASE("kernels-only mode needs a kernel-objects directory, and one without a manifest is refused") {
  fs::path cache = fs::temp_directory_path() / ("sb-kobj-" + std::to_string(sb::process_id()));
  NoRunner r;
  std::ostringstream out;
  BuildOptions o = win_options(true, cache);
  o.kernels_only = true;
  CHECK_THROWS_WITH(run_build(o, r, out), Catch::Contains("--kernels-only: expected --kernel-objects DIR too"));
  CHECK(r.calls == 0);
  if (sb::toolchain::host_platform_tag() == "win_amd64") return;  // the rest plans a win_amd64 row with placeholders
  o = win_options(true, cache);
  o.kernel_objects = cache / "no-such-dir";
  CHECK_THROWS_WITH(run_build(o, r, out),
                    Catch::Contains("--kernel-objects " + (cache / "no-such-dir").string() + ": no such directory") &&
                        Catch::Contains("--kernels-only --kernel-objects"));
  // Planned kernels-only: the kernel units, no binding, no link.
  o.kernels_only = true;
  std::ostringstream plan;
  CHECK(run_build(o, r, plan) == 0);
  std::string s = plan.str();
  INFO(s);
  CHECK(s.find("bindings: 0 cached, 0 to compile; links: 0") != std::string::npos);
  CHECK(s.find("nvcc.exe") != std::string::npos);
  CHECK(s.find("cl.exe\" /nologo /c") == std::string::npos);
  CHECK(s.find("its kernel objects into " + (cache / "no-such-dir").string()) != std::string::npos);
  CHECK(r.calls == 0);
  fs::remove_all(cache);
}
