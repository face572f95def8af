// The host toolchain behind one interface: the build module asks it for
// argv vectors (compile one source, link the extension) and the extension's
// file name, and never needs to know whether cl.exe or g++ is underneath.
// Implementations: MsvcToolchain (msvc_toolchain.h), GnuToolchain
// (gnu_toolchain.h).  They only build command lines; running them is the
// build module's ProcessRunner's job.
#pragma once

#include <string>
#include <vector>

namespace sb::platform {

// abi3: one extension for every CPython >= the minimum (stable ABI);
// per-interpreter: one per CPython minor version.
enum class AbiMode { Abi3, PerInterpreter };

struct PythonVersion {
  int major = 3;
  int minor = 12;
  std::string nodot() const;  // "312"
};

enum class CxxStandard { Cxx17, Cxx20 };

enum class SourceKind { Cuda, Cxx };

struct CompileJob {
  std::string source;
  std::string object;
  SourceKind kind = SourceKind::Cxx;
  CxxStandard standard = CxxStandard::Cxx17;
  std::vector<std::string> include_dirs;
  std::vector<std::string> defines;      // "NAME" or "NAME=VALUE"
  std::vector<std::string> cuda_gencode; // "arch=compute_90a,code=sm_90a" (Cuda only)
  std::vector<std::string> extra_flags;  // appended verbatim (kernel tuning flags)
};

struct LinkJob {
  std::vector<std::string> objects;
  std::string output_dir;      // the extension is written here
  AbiMode abi = AbiMode::Abi3;
  PythonVersion python;
  std::string torch_lib_dir;   // <site-packages>/torch/lib
  std::string cuda_lib_dir;    // where cudart's library is
  // The CUDA runtime linked in statically (families.json "link": {"cudart":
  // "static"}): the extension then needs no cudart DLL / .so of its own.
  bool cudart_static = false;
  std::string python_lib_dir;  // Windows: <prefix>\libs (python3.lib); unused on Linux
};

class HostToolchain {
 public:
  virtual ~HostToolchain() = default;
  // The wheel platform tag the outputs are for ("win_amd64", "linux_x86_64").
  virtual std::string platform_tag() const = 0;
  virtual std::vector<std::string> compile_command(const CompileJob& job) const = 0;
  virtual std::vector<std::string> link_command(const LinkJob& job) const = 0;
  // The extension module's file name, "_C" plus the suffix the interpreter
  // looks for.
  virtual std::string extension_filename(AbiMode abi, const PythonVersion& python) const = 0;
};

// torch's libraries an extension using the C++ API and CUDA links against,
// base names in link order ("c10", "torch", "torch_cpu", "torch_cuda", "c10_cuda").
const std::vector<std::string>& torch_link_libraries();

}  // namespace sb::platform
