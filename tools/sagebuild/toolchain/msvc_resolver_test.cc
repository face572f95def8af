// A win_amd64 row's toolchain, found on Linux: vswhere and vcvars64 answered
// by a fake runner (msvc_test_support.h: hand-written answers in their
// formats, not recorded on Windows), the build Python, a header package
// (CUTLASS) from a pip that writes a small wheel, and the resolver's
// placeholders for a dry run.  The row's CUDA: msvc_resolver_cuda_test.cc.
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

TEST_CASE("windows discovery: vswhere then vcvars64 through the runner (recorded output)") {
  FakeRunner r;
  r.answers[R"(C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe)"] =
      Result{0, kVswhere, "", true, 0};
  r.answers["cmd.exe"] = Result{0, set_output(true), "", true, 0};
  auto f = discover_windows_toolchain(r, R"(C:\Program Files (x86))");
  CHECK_FALSE(f.placeholders);
  CHECK(f.cl ==
        R"(C:\Program Files\Microsoft Visual Studio\2022\Enterprise\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64\cl.exe)");
  CHECK(f.nvcc == R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\bin\nvcc.exe)");
  CHECK(f.msvc_version == "14.44.35207");
  CHECK(f.torch_root == "<TORCH_DIR>");  // not discovered yet: stays a placeholder
  REQUIRE(r.seen.size() == 2);
  REQUIRE(r.seen[1].windows_command_line);
  CHECK(r.seen[1].windows_command_line->find("vcvars64.bat") != std::string::npos);

  // No toolkit installed is no error here: each row's CUDA is chosen later
  // (find_windows_cuda), and a CUDA 13 row's may come from PyPI.
  r.answers["cmd.exe"] = Result{0, set_output(false), "", true, 0};
  auto bare = discover_windows_toolchain(r, R"(C:\Program Files (x86))");
  CHECK(bare.cuda_path.empty());
  CHECK(bare.nvcc.empty());
  CHECK_FALSE(bare.placeholders);
  r.answers["cmd.exe"] = Result{0, "[ERROR:vcvars.bat] Toolset directory not found\r\n", "", true, 0};
  CHECK_THROWS_WITH(discover_windows_toolchain(r, R"(C:\Program Files (x86))"),
                    Catch::Contains("VCToolsInstallDir") && Catch::Contains("Toolset directory not found"));
  r.answers.erase(R"(C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe)");
  CHECK_THROWS_WITH(discover_windows_toolchain(r, R"(C:\Program Files (x86))"), Catch::Contains("vswhere.exe"));
  CHECK_THROWS_WITH(discover_windows_toolchain(r, ""), Catch::Contains("ProgramFiles(x86)"));
}

TEST_CASE("windows discovery of a row: the row's CUDA, nvcc's version, the build Python's torch") {
  FakeRunner r;
  WindowsToolchainFacts vs = vs_facts(r);
  r.answers[R"(D:\CUDA\v12.8\bin\nvcc.exe)"] = Result{0, kNvcc128, "", true, 0};
  r.answers["python"] = Result{0, python_answer("2.7.1+cu128", "12.8"), "", true, 0};
  WindowsToolchainFacts f = discover_windows_row(r, vs, win_row(), "python", false);
  CHECK(f.cuda_path == R"(D:\CUDA\v12.8)");  // CUDA_PATH_V12_8 before CUDA_PATH
  CHECK(f.nvcc == R"(D:\CUDA\v12.8\bin\nvcc.exe)");
  CHECK(f.nvcc_version == "12.8.93");
  CHECK(f.torch_root == R"(C:\py\Lib\site-packages\torch)");
  CHECK(f.torch_version == "2.7.1+cu128");
  CHECK(f.torch_cuda == "12.8");
  CHECK(f.python_include == R"(C:\py\Include)");
  CHECK(f.python_lib_dir == R"(C:\py\libs)");
  CHECK_FALSE(f.placeholders);
  CHECK(r.seen.back().argv[0] == "python");

  // The toolchain made from these facts has no placeholder left.
  RowToolchain tc = msvc_row_toolchain(f, win_row(), false);
  CHECK(tc.host->identity() == "nvcc 12.8.93 / msvc 14.44.35207");
  CHECK(tc.smoke_python);
  CHECK(tc.torch_importable);
  CHECK(tc.row_torch_cuda == "12.8");

  r.answers["python"] = Result{0, python_answer("2.7.1+cu126", "12.6"), "", true, 0};
  CHECK_THROWS_WITH(discover_windows_row(r, vs, win_row(), "python", false), Catch::Contains("built for CUDA 12.6"));
  r.answers[R"(D:\CUDA\v12.8\bin\nvcc.exe)"] =
      Result{0, "Cuda compilation tools, release 12.6, V12.6.85\r\n", "", true, 0};
  CHECK_THROWS_WITH(discover_windows_row(r, vs, win_row(), "python", false),
                    Catch::Contains("is CUDA 12.6.85") && Catch::Contains("needs CUDA 12.8"));
}

TEST_CASE("MsvcResolver off Windows: a dry run plans with labelled placeholders, a build refuses them") {
  FakeRunner r;
  ToolchainOptions o;
  o.plan_only = true;
  MsvcResolver dry(r, o, std::nullopt);
  RowToolchain tc = dry.resolve(win_row(), std::nullopt);
  CHECK(tc.placeholders);
  CHECK(r.seen.empty());  // nothing run
  CHECK(tc.host->compile_command(CompileJob{}).front() == R"(<VCToolsInstallDir>\bin\Hostx64\x64\cl.exe)");
  CHECK(tc.torch.root == "<TORCH_DIR>");
  REQUIRE(tc.checks.size() == 1);
  CHECK_FALSE(tc.checks[0].ok);
  CHECK_FALSE(tc.smoke_python);
  o.plan_only = false;
  MsvcResolver build(r, o, std::nullopt);
  CHECK_THROWS_WITH(build.resolve(win_row(), std::nullopt), Catch::Contains("not discoverable on this host"));
  auto linux_row = win_row();
  linux_row.platform = "linux_x86_64";
  CHECK_THROWS_WITH(dry.resolve(linux_row, std::nullopt), Catch::Contains("not win_amd64"));
}

TEST_CASE("MsvcResolver on a Windows host: Visual Studio once, the row's facts, vcvars64's runner for the build") {
  FakeRunner r;
  vs_facts(r);  // scripts vswhere and vcvars64
  r.answers[R"(D:\CUDA\v12.8\bin\nvcc.exe)"] = Result{0, kNvcc128, "", true, 0};
  r.answers["python"] = Result{0, python_answer("2.7.1+cu128", "12.8"), "", true, 0};
  std::vector<sb::run::Environment> made;
  MsvcResolver::Host host{R"(C:\Program Files (x86))", [&](sb::run::Environment env) {
                            made.push_back(env);
                            return std::unique_ptr<sb::run::ProcessRunner>(std::make_unique<FakeRunner>(r));
                          }};
  MsvcResolver res(r, ToolchainOptions{}, host);
  RowToolchain tc = res.resolve(win_row(), std::nullopt);
  CHECK_FALSE(tc.placeholders);
  REQUIRE(made.size() == 1);
  CHECK(made[0].get("VCToolsVersion") != nullptr);
  CHECK(&res.build_runner() != &r);  // ninja runs in vcvars64's environment
  res.resolve(win_row(), std::nullopt);
  CHECK(made.size() == 1);  // Visual Studio is found once per build
  // A stable-ABI row needs only the C shim's import libraries.
  CHECK_NOTHROW(res.resolve(win_row(), sb::matrix::TorchVersion{2, 7}));
}

namespace {

// sageattn3's header package, as matrix/sources/upstream-sageattn3.yaml names it.
HeaderPackage cutlass() {
  return HeaderPackage{
      "nvidia-cutlass", "4.2.0.0", {"cutlass_library/source/include", "cutlass_library/source/tools/util/include"}};
}

sb::matrix::Row sage3_win_row() {
  sb::matrix::Row r = win_row_130();
  r.id = "sageattn3-1.0.0-torch2.9.0-cu130-cp312-win_amd64";
  r.abi_mode = sb::wheel::AbiMode::per_interpreter;
  r.pythons = {{3, 12}};
  r.build_python = {3, 12};
  r.torch = {2, 9, 0, true};
  r.archs = {sb::parse_arch_arg("10.0a", "test"), sb::parse_arch_arg("12.0a", "test")};
  return r;
}

// vcvars64's runner: `pip download` answered by writing `wheel` (a name and
// its bytes) into its --dest, as pip does; anything else answered by `to`.
struct PipWritesWheel : sb::run::ProcessRunner {
  FakeRunner& to;
  std::pair<std::string, std::string> wheel;
  std::vector<Command> pips;
  PipWritesWheel(FakeRunner& t, std::pair<std::string, std::string> w) : to(t), wheel(std::move(w)) {}
  Result run(const Command& c) override {
    if (c.argv.size() < 4 || c.argv[2] != "pip" || c.argv[3] != "download") return to.run(c);
    pips.push_back(c);
    auto dest = std::find(c.argv.begin(), c.argv.end(), "--dest");
    REQUIRE(dest + 1 < c.argv.end());
    sb::write_file_atomic(fs::path(*(dest + 1)) / wheel.first, wheel.second);
    return Result{0, "Saved " + wheel.first + "\n", "", true, 0};
  }
};

std::string headers_wheel() {
  using sb::zip::testing::member;
  return sb::zip::testing::build_zip(sb::zip::testing::TestZip(
      {member("cutlass_library/__init__.py", ""),
       member("cutlass_library/source/include/cutlass/cutlass.h", "#pragma once\n"),
       member("cutlass_library/source/include/cute/tensor.hpp", "#pragma once\n"),
       member("cutlass_library/source/tools/util/include/cutlass/util/packed_stride.hpp", "#pragma once\n"),
       member("nvidia_cutlass-4.2.0.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: py3-none-any\n")}));
}

}  // namespace

TEST_CASE("MsvcResolver off Windows: a sageattn3 row's dry run plans CUTLASS's headers under <CACHE_DIR>") {
  FakeRunner r;
  ToolchainOptions o;
  o.plan_only = true;
  o.provision = false;
  MsvcResolver dry(r, o, std::nullopt);
  dry.resolve(sage3_win_row(), std::nullopt);
  Check check;
  ProvisionedHeaders h = dry.headers(cutlass(), sage3_win_row(), check);
  CHECK(r.seen.empty());  // nothing run, nothing downloaded
  CHECK(h.requirement == "nvidia-cutlass==4.2.0.0");
  REQUIRE(h.include_dirs.size() == 2);
  CHECK(h.include_dirs[0].string() == R"(<CACHE_DIR>\headers\nvidia-cutlass-4.2.0.0\cutlass_library\source\include)");
  CHECK(h.include_dirs[1].string() ==
        R"(<CACHE_DIR>\headers\nvidia-cutlass-4.2.0.0\cutlass_library\source\tools\util\include)");
  CHECK(check.ok);
  CHECK(check.what == "nvidia-cutlass 4.2.0.0 headers");
  CHECK(check.found.find("dry run: `build` downloads nvidia-cutlass==4.2.0.0 from PyPI") != std::string::npos);
  // The compile line names them as cl.exe and nvcc.exe read them.
  CompileJob cu;
  cu.kind = SourceKind::cuda;
  cu.include_dirs = h.include_dirs;
  auto argv = dry.resolve(sage3_win_row(), std::nullopt).host->compile_command(cu);
  CHECK(std::find(argv.begin(), argv.end(),
                  R"(-I<CACHE_DIR>\headers\nvidia-cutlass-4.2.0.0\cutlass_library\source\include)") != argv.end());
}

TEST_CASE("MsvcResolver on a Windows host: CUTLASS's pure wheel through the build Python's pip, one cache entry") {
  fs::path cache = fs::temp_directory_path() / ("sb-msvc-headers-" + std::to_string(sb::process_id()));
  fs::remove_all(cache);
  FakeRunner r;
  vs_facts(r);
  std::pair<std::string, std::string> wheel{"nvidia_cutlass-4.2.0.0-py3-none-any.whl", headers_wheel()};
  PipWritesWheel* pip = nullptr;
  auto host = [&] {
    return MsvcResolver::Host{R"(C:\Program Files (x86))", [&](sb::run::Environment) {
                                auto p = std::make_unique<PipWritesWheel>(r, wheel);
                                pip = p.get();
                                return std::unique_ptr<sb::run::ProcessRunner>(std::move(p));
                              }};
  };
  ToolchainOptions o;
  o.cache_dir = cache;
  const fs::path entry = cache / "headers" / "nvidia-cutlass-4.2.0.0";

  SECTION("a build downloads the wheel for win_amd64 and unpacks its include directories") {
    MsvcResolver build(r, o, host());
    Check check;
    ProvisionedHeaders h = build.headers(cutlass(), sage3_win_row(), check);
    REQUIRE(pip);
    REQUIRE(pip->pips.size() == 1);
    std::string argv;
    for (const auto& a : pip->pips[0].argv) argv += a + " ";
    CHECK(argv.find("python -m pip download --no-deps --only-binary=:all: ") == 0);
    CHECK(argv.find("--platform win_amd64 nvidia-cutlass==4.2.0.0") != std::string::npos);
    CHECK(check.ok);
    CHECK(check.found == entry.string() + " (provisioned from PyPI)");
    REQUIRE(h.include_dirs.size() == 2);
    CHECK(h.include_dirs[0] == entry / "cutlass_library/source/include");
    CHECK(fs::is_regular_file(h.include_dirs[0] / "cutlass/cutlass.h"));
    CHECK(fs::is_regular_file(h.include_dirs[0] / "cute/tensor.hpp"));
    CHECK(fs::is_regular_file(h.include_dirs[1] / "cutlass/util/packed_stride.hpp"));
    CHECK_FALSE(fs::exists(entry / "cutlass_library/__init__.py"));  // the include directories only
    CHECK_FALSE(fs::exists(entry / ".downloads"));
    // Filled once: another build (and a dry run) use the entry without pip.
    MsvcResolver again(r, o, host());
    again.headers(cutlass(), sage3_win_row(), check);
    CHECK(pip->pips.empty());
    CHECK(check.found == entry.string() + " (cache)");
  }
  SECTION("a platform-specific wheel is refused: its headers could not serve Linux rows from the same entry") {
    wheel.first = "nvidia_cutlass-4.2.0.0-py3-none-win_amd64.whl";
    MsvcResolver build(r, o, host());
    Check check;
    CHECK_THROWS_WITH(build.headers(cutlass(), sage3_win_row(), check),
                      Catch::Contains("is not a pure wheel") && Catch::Contains("nvidia-cutlass==4.2.0.0"));
    CHECK_FALSE(fs::exists(entry));  // nothing half-made left in the cache
  }
  SECTION("a dry run names the entry a build fills, and doctor says it is missing; neither downloads") {
    o.plan_only = true;
    o.provision = false;
    Check check;
    // Each resolver stays alive while `pip` (its runner) is read: a temporary
    // one would leave `pip` dangling, and the check would read freed memory
    // (it failed on some machines and passed on others).
    MsvcResolver dry(r, o, host());
    ProvisionedHeaders h = dry.headers(cutlass(), sage3_win_row(), check);
    CHECK(check.ok);
    CHECK(check.found.find(entry.string() + " (dry run: `build` downloads nvidia-cutlass==4.2.0.0") == 0);
    CHECK(h.include_dirs.at(0) == entry / "cutlass_library/source/include");
    REQUIRE(pip);
    CHECK(pip->pips.empty());
    o.plan_only = false;
    MsvcResolver doctor(r, o, host());
    doctor.headers(cutlass(), sage3_win_row(), check);
    CHECK_FALSE(check.ok);
    CHECK(check.found == "not in the cache " + entry.string());
    REQUIRE(pip);
    CHECK(pip->pips.empty());
  }
  fs::remove_all(cache);
}
