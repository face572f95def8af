// The Windows toolchain: nvcc driving cl.exe for .cu files, cl.exe for C++
// bindings, link.exe for the .pyd.  All paths are Windows path strings (see
// win_path.h), so these command lines are built and tested on Linux too.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sagebuild/platform/toolchain.h"

namespace sb::platform {

struct MsvcTools {
  std::string nvcc;  // ...\CUDA\v12.9\bin\nvcc.exe
  std::string cl;    // ...\VC\Tools\MSVC\14.44.35207\bin\HostX64\x64\cl.exe
  std::string link;  // link.exe beside cl.exe
  // nvcc refuses an MSVC newer than the CUDA release knows; only a row that
  // asks for it (the matrix decides) passes -allow-unsupported-compiler.
  bool allow_unsupported_compiler = false;
};

class MsvcToolchain final : public HostToolchain {
 public:
  explicit MsvcToolchain(MsvcTools tools) : tools_(std::move(tools)) {}
  std::string platform_tag() const override { return "win_amd64"; }
  std::vector<std::string> compile_command(const CompileJob& job) const override;
  std::vector<std::string> link_command(const LinkJob& job) const override;
  // abi3: "_C.pyd"; per-interpreter: "_C.cp312-win_amd64.pyd".
  std::string extension_filename(AbiMode abi, const PythonVersion& python) const override;

 private:
  std::vector<std::string> nvcc_command(const CompileJob& job) const;
  std::vector<std::string> cl_command(const CompileJob& job) const;
  MsvcTools tools_;
};

// cl.exe flags every object needs to link with torch: optimized, the DLL C
// runtime torch uses (/MD), C++ exceptions, the conforming preprocessor
// (CUDA 12.x's CCCL headers need it).
std::vector<std::string> msvc_cl_flags(CxxStandard standard);

// Where cudart.lib is: %CUDA_PATH%\lib\x64 when a toolkit is installed,
// else the nvidia-cuda-runtime wheel's nvidia\cuda_runtime\lib\x64 under
// `site_packages`.  The toolkit's directory also has cudart_static.lib;
// whether the wheel does is not known here (the Windows plan uses CUDA_PATH).
std::string windows_cudart_lib_dir(const std::optional<std::string>& cuda_path,
                                   std::string_view site_packages);

}  // namespace sb::platform
