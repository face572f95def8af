// A win_amd64 row's toolchain (resolver.h).
//
// On a Windows host: vswhere.exe (the newest complete Visual Studio with the
// x64 C++ tools), then vcvars64.bat's environment, from which cl.exe and
// link.exe are taken; per row the toolkit of the row's CUDA
// (%CUDA_PATH_V12_8%, else %CUDA_PATH%; `nvcc --version` must agree; for
// CUDA 13, when neither has it, NVIDIA's win_amd64 wheels from PyPI unpacked
// into the cache, as on Linux) and the build Python (windows_python.h) with
// the row's torch, its headers and import libraries; a source's header
// packages (CUTLASS) as on Linux (provide_headers).  Everything runs through
// ProcessRunner, so it is tested with a fake runner; nothing of it has run on
// a real Windows machine.
//
// Where a fact cannot be discovered (a dry run on another host, or a dry run
// on a Windows host that lacks a piece) it is a labelled placeholder
// ("<CUDA_PATH>", "<VCToolsInstallDir>", ...), never an invented path.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "sagebuild/run/win_env.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::toolchain {

// What a Windows build needs to know of the machine (Windows path strings).
struct WindowsToolchainFacts {
  std::string cuda_path;      // %CUDA_PATH% ("" when unset), then the row's toolkit
  std::string nvcc;           // <CUDA_PATH>\bin\nvcc.exe
  std::string nvcc_version;   // "12.8.93", or a placeholder
  std::string cuda_origin;    // where the row's toolkit was found: "CUDA_PATH_V12_8", "cache (PyPI wheels)", ...
  std::string cl;             // <VCToolsInstallDir>\bin\Hostx64\x64\cl.exe
  std::string link;           // link.exe beside cl.exe
  std::string msvc_version;   // %VCToolsVersion%, or a placeholder
  std::string torch_root;     // <site-packages>\torch
  std::string torch_version;  // the build Python's torch ("2.7.1+cu128"), or a placeholder
  std::string torch_cuda;     // the CUDA it was built for ("12.8"), or a placeholder
  std::string python;         // the build Python's executable
  int python_major = 0, python_minor = 0;
  std::string python_include;              // <python>\include
  std::string python_lib_dir;              // <python>\libs (python3.lib, python312.lib)
  std::map<std::string, std::string> env;  // what vcvars64 set (empty for placeholders)
  bool placeholders = false;               // some facts are placeholders: plan only, never build
};

// Every fact a labelled placeholder.
WindowsToolchainFacts placeholder_windows_facts();

// vswhere.exe then vcvars64.bat (the runner runs them); cl.exe, link.exe and
// %CUDA_PATH% (if set) from its environment.  Throws UsageError naming what is
// missing.
WindowsToolchainFacts discover_windows_toolchain(ProcessRunner& runner, const std::string& program_files_x86,
                                                 bool allow_prerelease_vs = false);

// Puts CUDA `cuda` ("13.0") where a Windows build can use it and returns that
// home (MsvcResolver: provision_cuda, NVIDIA's win_amd64 wheels into the cache).
using WindowsCudaProvisioner = std::function<std::string(const matrix::CudaVersion& cuda)>;

// The row's CUDA toolkit into `f`: `cuda_home` (--cuda-home: a demand), else
// %CUDA_PATH_V<x>_<y>%, else %CUDA_PATH% when its nvcc is the row's CUDA, else
// `provision` when given (a CUDA PyPI has).  Its `nvcc --version` must say
// the row's version.  Throws UsageError naming what was looked at.
void find_windows_cuda(ProcessRunner& runner, WindowsToolchainFacts& f, const matrix::Row& row,
                       const std::optional<std::string>& cuda_home, const WindowsCudaProvisioner& provision = {});

// The build Python into `f`: `python` with the row's torch and the import
// libraries its binding links (stable_abi: the C shim's only).  Throws
// UsageError.
void find_windows_python(ProcessRunner& runner, WindowsToolchainFacts& f, const matrix::Row& row,
                         const std::string& python, bool stable_abi);

// The row's facts on top of discover_windows_toolchain()'s: find_windows_cuda
// then find_windows_python.  `runner` runs in vcvars64's environment.  Throws
// UsageError.
WindowsToolchainFacts discover_windows_row(ProcessRunner& runner, WindowsToolchainFacts toolchain,
                                           const matrix::Row& row, const std::string& python, bool stable_abi,
                                           const std::optional<std::string>& cuda_home = std::nullopt,
                                           const WindowsCudaProvisioner& provision = {});

// vcvars64.bat's environment, as captured in `facts.env`.
run::Environment windows_build_environment(const WindowsToolchainFacts& facts);

// The host toolchain and facts of a row, from its Windows facts.
RowToolchain msvc_row_toolchain(const WindowsToolchainFacts& facts, const matrix::Row& row,
                                bool allow_unsupported_compiler);

class MsvcResolver final : public RowResolver {
 public:
  // How a Windows host is searched: %ProgramFiles(x86)% (where vswhere.exe
  // lives) and the runner for children in vcvars64's environment.
  struct Host {
    std::string program_files_x86;
    std::function<std::unique_ptr<ProcessRunner>(run::Environment)> make_runner;
  };
  // `host` nullopt: this host is not Windows; every fact is a placeholder
  // (dry runs only).
  MsvcResolver(ProcessRunner& runner, ToolchainOptions options, std::optional<Host> host);
  RowToolchain resolve(const matrix::Row& row, const std::optional<matrix::TorchVersion>& stable_min_torch) override;
  std::vector<Check> diagnose(const matrix::Row& row) override;
  ProvisionedHeaders headers(const HeaderPackage& package, const matrix::Row& row, Check& check) override;
  ProcessRunner& build_runner() override { return vc_runner_ ? *vc_runner_ : runner_; }

 private:
  WindowsToolchainFacts facts_for(const matrix::Row& row, bool stable_abi, std::vector<Check>& checks);
  void find_visual_studio();
  std::optional<std::string> cuda_home() const;  // --cuda-home
  // Whether the row's CUDA comes from PyPI when nothing installed has it.
  bool cuda_from_pypi(const matrix::Row& row) const;
  // What find_windows_cuda may provision with: provision_cuda with the
  // build Python's pip (a build), or the cache's entry when already there (a
  // dry run, doctor: nothing downloaded); empty otherwise.
  WindowsCudaProvisioner provisioner(const matrix::Row& row, const std::string& python);

  ProcessRunner& runner_;
  ToolchainOptions opt_;
  std::optional<Host> host_;
  std::optional<WindowsToolchainFacts> vs_;  // vswhere + vcvars64, once per build
  std::string vs_problem_;                   // why vs_ is placeholders
  std::unique_ptr<ProcessRunner> vc_runner_;
};

}  // namespace sb::toolchain
