// Helpers for the MsvcResolver tests (msvc_resolver_test.cc,
// msvc_resolver_cuda_test.cc): win_amd64 rows, and a fake runner answering
// vswhere, vcvars64 (cmd.exe), nvcc and the build Python in their formats,
// written by hand, not recorded on Windows.  Test-only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sagebuild/common/arch.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/msvc_resolver.h"

namespace sb::toolchain::testing {

using sb::run::Command;
using sb::run::Result;

inline sb::matrix::Row win_row() {
  sb::matrix::Row r;
  r.id = "sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64";
  r.abi_mode = sb::wheel::AbiMode::abi3;
  r.pythons = {{3, 9}, {3, 10}};
  r.build_python = {3, 10};
  r.torch = {2, 7, 1, true};
  r.cuda = {12, 8};
  r.platform = "win_amd64";
  r.archs = {sb::parse_arch_arg("8.0", "test")};
  return r;
}

inline sb::matrix::Row win_row_130() {
  sb::matrix::Row r = win_row();
  r.id = "sageattention-2.2.0-torch2.11.0-cu130-abi3-win_amd64";
  r.torch = {2, 11, 0, true};
  r.cuda = {13, 0};
  return r;
}

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

inline const char* kVswhere = R"([{"installationPath": "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise",
  "installationVersion": "17.14.36301.6", "displayName": "Visual Studio Enterprise 2022",
  "isPrerelease": false, "isComplete": true}])";

inline std::string set_output(bool with_cuda) {
  std::string s =
      "INCLUDE=C:\\VS\\include\r\nLIB=C:\\VS\\lib\r\nLIBPATH=C:\\VS\\lib\r\nPath=C:\\VS\\bin;C:\\Windows\r\n"
      "VCToolsInstallDir=C:\\Program Files\\Microsoft Visual "
      "Studio\\2022\\Enterprise\\VC\\Tools\\MSVC\\14.44.35207\\\r\n"
      "VCToolsVersion=14.44.35207\r\nWindowsSdkDir=C:\\Program Files (x86)\\Windows Kits\\10\\\r\n";
  if (with_cuda) s += "CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8\r\n";
  return s;
}

// The build Python's answer (windows_python.h's script), written by hand in
// its format; not recorded on a Windows machine.
inline std::string python_answer(const std::string& torch_version, const std::string& cuda) {
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

inline const char* kNvcc128 =
    "nvcc: NVIDIA (R) Cuda compiler driver\r\nCopyright (c) 2005-2025 NVIDIA Corporation\r\n"
    "Cuda compilation tools, release 12.8, V12.8.93\r\nBuild cuda_12.8.r12.8/compiler.35583870_0\r\n";

inline WindowsToolchainFacts vs_facts(FakeRunner& r) {
  r.answers[R"(C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe)"] =
      Result{0, kVswhere, "", true, 0};
  r.answers["cmd.exe"] = Result{0, set_output(true) + "CUDA_PATH_V12_8=D:\\CUDA\\v12.8\r\n", "", true, 0};
  return discover_windows_toolchain(r, R"(C:\Program Files (x86))");
}

inline const char* kNvcc130 =
    "nvcc: NVIDIA (R) Cuda compiler driver\r\nCopyright (c) 2005-2025 NVIDIA Corporation\r\n"
    "Cuda compilation tools, release 13.0, V13.0.88\r\nBuild cuda_13.0.r13.0/compiler.36424714_0\r\n";

}  // namespace sb::toolchain::testing
