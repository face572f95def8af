// The Windows toolchain: nvcc driving cl.exe for .cu files, cl.exe for the
// binding, link.exe for the .pyd (host_toolchain.h).  Every path in a command
// is written with '\' (run/win_path.h), so the command lines are the same
// text on any host and are tested on Linux.
#pragma once

#include <string>

#include "sagebuild/run/win_cmdline.h"
#include "sagebuild/run/win_path.h"
#include "sagebuild/toolchain/host_toolchain.h"

namespace sb::toolchain {

struct MsvcTools {
  std::string nvcc;          // ...\CUDA\v12.9\bin\nvcc.exe
  std::string nvcc_version;  // "12.9.86"
  std::string cl;            // ...\VC\Tools\MSVC\14.44.35207\bin\HostX64\x64\cl.exe
  std::string link;          // link.exe beside cl.exe
  std::string msvc_version;  // %VCToolsVersion%: "14.44.35207"
  // nvcc refuses an MSVC newer than the CUDA release knows; only a build
  // that asks for it (--allow-unsupported-compiler) passes
  // -allow-unsupported-compiler.
  bool allow_unsupported_compiler = false;
};

class MsvcToolchain final : public HostToolchain {
 public:
  explicit MsvcToolchain(MsvcTools tools) : tools_(std::move(tools)) {}
  std::string platform_tag() const override { return "win_amd64"; }
  HostCompiler host_compiler() const override { return {"msvc", tools_.msvc_version}; }
  std::string identity() const override;
  std::string object_suffix() const override { return ".obj"; }
  // abi3: "_C.pyd"; per-interpreter: "_C.cp312-win_amd64.pyd".
  std::string extension_filename(const std::string& stem, wheel::AbiMode abi,
                                 const PythonVersion& python) const override {
    return abi == wheel::AbiMode::abi3 ? stem + ".pyd" : stem + ".cp" + python.nodot() + "-win_amd64.pyd";
  }
  std::vector<std::string> compile_command(const CompileJob& job) const override;
  std::vector<std::string> link_command(const LinkJob& job) const override;
  // cmd.exe runs argv, then `move /y temp output` (win_cmdline.h).
  std::string run_then_move(const std::vector<std::string>& argv, const std::filesystem::path& temp,
                            const std::filesystem::path& output) const override {
    return run::cmd_run_then_move(argv, run::to_backslashes(temp.string()), run::to_backslashes(output.string()));
  }

 private:
  std::vector<std::string> nvcc_command(const CompileJob& job) const;
  std::vector<std::string> cl_command(const CompileJob& job) const;
  MsvcTools tools_;
};

// cl.exe flags every object needs to link with torch: optimized, the DLL C
// runtime torch uses (/MD), C++ exceptions, the conforming preprocessor
// (CUDA 12.x's CCCL headers need it).
std::vector<std::string> msvc_cl_flags(CxxStandard standard);

// The manifest's GCC-spelled host flags for cl.exe: -O2 / -O3 (msvc_cl_flags
// has /O2), -fPIC and -fvisibility=hidden (a DLL exports nothing unless
// asked) have no cl.exe counterpart to add; anything else is refused with a
// UsageError naming `origin`.
std::vector<std::string> msvc_host_flags(const std::vector<std::string>& gcc_flags, const std::string& origin);

}  // namespace sb::toolchain
