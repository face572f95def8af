// The Windows compile graph of win_amd64 rows: the same kernel families,
// binding and link as plan.h, with the command lines made by the platform
// unit's HostToolchain (MsvcToolchain: nvcc driving cl.exe, cl.exe for the
// binding, link.exe for _C.pyd).  Paths are Windows path strings, so the plan
// is built and tested on Linux.
//
// Where the toolchain facts come from:
//  * a dry run on a non-Windows host: placeholder_windows_facts(), every fact
//    a Windows machine would discover shown as a labelled placeholder
//    ("<CUDA_PATH>", "<VCToolsInstallDir>", ...), never an invented path;
//  * a Windows host: discover_windows_toolchain(), which runs vswhere.exe and
//    vcvars64.bat through the ProcessRunner interface.  It is tested here with
//    a fake runner only: nothing of it has run on Windows.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/build/kernel_manifest.h"
#include "sagebuild/build/object_key.h"
#include "sagebuild/build/plan.h"
#include "sagebuild/build/process.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/platform/toolchain.h"
#include "sagebuild/platform/win_env.h"

namespace sb::build {

// What a Windows plan needs to know of the machine (Windows path strings).
struct WindowsToolchainFacts {
  std::string cuda_path;       // %CUDA_PATH%
  std::string nvcc;            // <CUDA_PATH>\bin\nvcc.exe
  std::string nvcc_version;    // "12.8.93", or a placeholder
  std::string cl;              // <VCToolsInstallDir>\bin\Hostx64\x64\cl.exe
  std::string link;            // link.exe beside cl.exe
  std::string msvc_version;    // %VCToolsVersion%, or a placeholder
  std::string torch_root;      // <site-packages>\torch
  std::string python_include;  // <python>\include
  std::string python_lib_dir;  // <python>\libs (python3.lib, python312.lib)
  std::string torch_version;   // the build Python's torch ("2.7.1+cu128"), or a placeholder
  std::string torch_cuda;      // the CUDA it was built for ("12.8"), or a placeholder
  std::map<std::string, std::string> env;  // what vcvars added (empty for placeholders)
  bool placeholders = false;   // true: the facts are labelled placeholders (dry run off Windows)
};

// The facts of a dry run on a host that cannot discover them.
WindowsToolchainFacts placeholder_windows_facts();

struct WindowsDiscoveryOptions {
  std::string program_files_x86;  // %ProgramFiles(x86)%, where vswhere.exe lives
  bool allow_prerelease_vs = false;
};

// On a Windows host: vswhere.exe (newest complete Visual Studio with the x64
// C++ tools), then vcvars64.bat's environment, from which cl.exe, link.exe
// and %CUDA_PATH% are taken.  Throws UsageError naming what is missing.
// The row's facts (nvcc's version, torch, Python) come from
// discover_windows_row().
// Untested on Windows: only against recorded output with a fake runner.
WindowsToolchainFacts discover_windows_toolchain(ProcessRunner& runner, const WindowsDiscoveryOptions& options);

// The facts of one row, on top of discover_windows_toolchain()'s: the CUDA
// toolkit of the row's version (%CUDA_PATH_V<major>_<minor>%, which NVIDIA's
// installer sets per version, else %CUDA_PATH%), whose `nvcc --version` must
// say that version; and `python` (the build interpreter, windows_python.h)
// with the row's torch, its headers and import libraries.  `runner` runs in
// vcvars64's environment.  Throws UsageError naming what is missing.
// Untested on Windows: only with a fake runner.
WindowsToolchainFacts discover_windows_row(ProcessRunner& runner, WindowsToolchainFacts toolchain,
                                           const sb::matrix::Row& row, const std::string& python);

// The environment every build process runs in on a Windows host:
// vcvars64.bat's, as captured in `facts.env`.
platform::Environment windows_build_environment(const WindowsToolchainFacts& facts);

struct WindowsRowInput {
  sb::matrix::Row row;
  KernelManifest manifest;
  WindowsToolchainFacts facts;
};

struct WindowsPlanSettings {
  std::filesystem::path repo_root;  // read here, for the object keys
  std::string win_repo_root;        // the same tree as a Windows path (or "<SOURCE_DIR>")
  std::string win_objects_dir;      // where .obj files go
  std::string win_work_dir;         // per-row outputs: <work>\rows\<id>\_C.pyd
  ReadFileFn read = read_disk_file;
};

// The manifest's nvcc flags for nvcc driving cl.exe: the -std= flag becomes
// the job's standard, GCC-only host flags (-Xcompiler=-fPIC) are dropped and
// any other -Xcompiler flag is refused (UsageError: it has no cl.exe meaning
// sagebuild knows); device flags pass through.
struct TranslatedFlags {
  platform::CxxStandard standard = platform::CxxStandard::Cxx17;
  std::vector<std::string> extra;    // nvcc: passed through; cl: /D... already split out
  std::vector<std::string> defines;  // cl: from -DNAME[=VALUE]
};
TranslatedFlags windows_nvcc_flags(const std::vector<std::string>& flags, const std::string& origin);
// The manifest's binding (g++) flags for cl.exe: -std= -> standard, -D -> defines,
// -O2/-fPIC/-fvisibility=hidden dropped (msvc_cl_flags() has /O2; a DLL exports
// nothing unless asked); anything else is refused with UsageError.
TranslatedFlags windows_cxx_flags(const std::vector<std::string>& flags, const std::string& origin);

// One Windows row's graph: edges write their outputs directly (no rename;
// nothing runs them on this host).  `toolchain` makes every command line.
struct WindowsPlan {
  std::vector<Edge> edges;  // kernels first, then bindings, then links
  std::vector<RowGraph> rows;
};
WindowsPlan plan_windows_compile(const std::vector<WindowsRowInput>& rows, const WindowsPlanSettings& settings,
                                 bool allow_unsupported_compiler);

// The edge as one CreateProcess command line (win_cmdline's quoting rules).
std::string windows_command_line(const Edge& edge);

}  // namespace sb::build
