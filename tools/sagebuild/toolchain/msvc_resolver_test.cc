// A win_amd64 row's toolchain, found on Linux: vswhere and vcvars64 answered
// by a fake runner (hand-written answers in their formats, not recorded on
// Windows), the row's CUDA and build Python, and the resolver's placeholders
// for a dry run.  Nothing of it has run on a Windows machine.
#include <catch2/catch.hpp>

#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/toolchain/msvc_resolver.h"

using namespace sb::toolchain;
using sb::run::Command;
using sb::run::Result;

namespace {

sb::matrix::Row win_row() {
  sb::matrix::Row r;
  r.id = "sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64";
  r.abi_mode = sb::wheel::AbiMode::abi3;
  r.pythons = {"3.9", "3.10"};
  r.build_python = "3.10";
  r.torch = "2.7.1";
  r.cuda = "12.8";
  r.platform = "win_amd64";
  r.archs = {sb::parse_arch_arg("8.0", "test")};
  return r;
}

}  // namespace

namespace {

struct FakeRunner : ProcessRunner {
  std::map<std::string, Result> answers;  // by argv[0]
  std::vector<Command> seen;
  Result run(const Command& c) override {
    seen.push_back(c);
    auto it = answers.find(c.argv.empty() ? "" : c.argv[0]);
    if (it == answers.end()) return Result{-1, "", "not faked", false, 0};
    return it->second;
  }
};

const char* kVswhere = R"([{"installationPath": "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise",
  "installationVersion": "17.14.36301.6", "displayName": "Visual Studio Enterprise 2022",
  "isPrerelease": false, "isComplete": true}])";

std::string set_output(bool with_cuda) {
  std::string s =
      "INCLUDE=C:\\VS\\include\r\nLIB=C:\\VS\\lib\r\nLIBPATH=C:\\VS\\lib\r\nPath=C:\\VS\\bin;C:\\Windows\r\n"
      "VCToolsInstallDir=C:\\Program Files\\Microsoft Visual "
      "Studio\\2022\\Enterprise\\VC\\Tools\\MSVC\\14.44.35207\\\r\n"
      "VCToolsVersion=14.44.35207\r\nWindowsSdkDir=C:\\Program Files (x86)\\Windows Kits\\10\\\r\n";
  if (with_cuda) s += "CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8\r\n";
  return s;
}

}  // namespace

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

  r.answers["cmd.exe"] = Result{0, set_output(false), "", true, 0};
  CHECK_THROWS_WITH(discover_windows_toolchain(r, R"(C:\Program Files (x86))"), Catch::Contains("CUDA_PATH"));
  r.answers["cmd.exe"] = Result{0, "[ERROR:vcvars.bat] Toolset directory not found\r\n", "", true, 0};
  CHECK_THROWS_WITH(discover_windows_toolchain(r, R"(C:\Program Files (x86))"),
                    Catch::Contains("VCToolsInstallDir") && Catch::Contains("Toolset directory not found"));
  r.answers.erase(R"(C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe)");
  CHECK_THROWS_WITH(discover_windows_toolchain(r, R"(C:\Program Files (x86))"), Catch::Contains("vswhere.exe"));
  CHECK_THROWS_WITH(discover_windows_toolchain(r, ""), Catch::Contains("ProgramFiles(x86)"));
}

namespace {

// The build Python's answer (windows_python.h's script), written by hand in
// its format; not recorded on a Windows machine.
std::string python_answer(const std::string& torch_version, const std::string& cuda) {
  nlohmann::json j = {{"executable", "C:\\py\\python.exe"},
                      {"version", {3, 12}},
                      {"include", "C:\\py\\Include"},
                      {"libs_dir", "C:\\py\\libs"},
                      {"has_python_h", true},
                      {"libs", {"python3.lib", "python312.lib"}},
                      {"torch",
                       {{"root", "C:\\py\\Lib\\site-packages\\torch"},
                        {"lib_dir", "C:\\py\\Lib\\site-packages\\torch\\lib"},
                        {"version_py", "__version__ = '" + torch_version + "'\ncuda: Optional[str] = '" + cuda + "'\n"},
                        {"libs", {"c10.lib", "c10_cuda.lib", "torch.lib", "torch_cpu.lib", "torch_cuda.lib"}},
                        {"include_dirs",
                         {"C:\\py\\Lib\\site-packages\\torch\\include",
                          "C:\\py\\Lib\\site-packages\\torch\\include\\torch\\csrc\\api\\include"}}}}};
  return j.dump() + "\n";
}

const char* kNvcc128 =
    "nvcc: NVIDIA (R) Cuda compiler driver\r\nCopyright (c) 2005-2025 NVIDIA Corporation\r\n"
    "Cuda compilation tools, release 12.8, V12.8.93\r\nBuild cuda_12.8.r12.8/compiler.35583870_0\r\n";

WindowsToolchainFacts vs_facts(FakeRunner& r) {
  r.answers[R"(C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe)"] =
      Result{0, kVswhere, "", true, 0};
  r.answers["cmd.exe"] = Result{0, set_output(true) + "CUDA_PATH_V12_8=D:\\CUDA\\v12.8\r\n", "", true, 0};
  return discover_windows_toolchain(r, R"(C:\Program Files (x86))");
}

}  // namespace

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
  CHECK_NOTHROW(res.resolve(win_row(), TorchMinor{2, 7}));
}
