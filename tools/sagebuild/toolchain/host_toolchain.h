// The host toolchain behind one interface: the planner describes what to
// compile and link (CompileJob, LinkJob) and asks the toolchain for the
// command lines, the object and extension file names and the line ninja runs.
// Two implementations: GnuToolchain (nvcc driving g++/clang++, the same
// compiler for the binding and the link; Linux) and MsvcToolchain (nvcc
// driving cl.exe, cl.exe, link.exe; Windows).  They only build text; running
// it is run/'s job, so both are tested on any host.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/matrix/version.h"
#include "sagebuild/wheel/tags.h"

namespace sb::toolchain {

enum class CxxStandard { cxx17, cxx20 };

enum class SourceKind { cuda, cxx };

struct CompileJob {
  SourceKind kind = SourceKind::cxx;
  std::filesystem::path source;
  std::filesystem::path object;  // what the command writes (a temporary name)
  CxxStandard standard = CxxStandard::cxx17;
  std::vector<std::filesystem::path> include_dirs;         // the project's own headers
  std::vector<std::filesystem::path> system_include_dirs;  // torch, CUDA, Python
  std::vector<std::string> defines;                        // "NAME" or "NAME=VALUE"
  std::vector<std::string> gencode;                        // cuda: "arch=compute_90a,code=sm_90a"
  std::vector<std::string> device_flags;                   // cuda: nvcc's own flags (-O3, --use_fast_math, -Xptxas=...)
  // cuda: how many threads nvcc may use for this one unit's archs
  // (nvcc_thread_flags); not part of the object's key.
  int device_threads = 1;
  // Host compiler flags in GCC's spelling, as the manifest writes them
  // ("-O2", "-fPIC"); each toolchain translates or refuses them.
  std::vector<std::string> host_flags;
  std::string flags_origin;  // where they were written, for the error message
  // The torch build's libstdc++ ABI (_GLIBCXX_USE_CXX11_ABI), where the
  // toolchain uses libstdc++.
  std::optional<bool> cxx11_abi;
  // Directories the object must not name (the checkout, torch's
  // site-packages): each is dropped from the paths the object records
  // (__FILE__ in assertion macros), so the object, and the wheel, do not
  // depend on where they are.
  std::vector<std::filesystem::path> unrecorded_prefixes;
  // The preprocessor alone (nvcc/g++ -E, cl.exe /P), its output into
  // `object`: the same command line otherwise (`sagebuild doctor --preprocess`).
  bool preprocess_only = false;
};

using matrix::PythonVersion;

struct LinkJob {
  std::vector<std::filesystem::path> objects;
  std::filesystem::path output;  // what the command writes (a temporary name)
  wheel::AbiMode abi = wheel::AbiMode::abi3;
  PythonVersion python;                 // per-interpreter: the interpreter linked for
  std::filesystem::path torch_lib_dir;  // <torch>/lib
  std::vector<std::string> torch_libs;  // base names in link order ("torch_cpu", "torch_cuda")
  std::filesystem::path cuda_lib_dir;   // where cudart's library is
  // The CUDA runtime linked in statically (families.json "link": {"cudart":
  // "static"}): the extension then needs no cudart DLL / .so of its own.
  bool cudart_static = false;
  std::filesystem::path python_lib_dir;  // Windows: <prefix>\libs (python3.lib); unused on Linux
  // Further libraries, after torch's and CUDA's ("cuda": the driver), and
  // where to find them (CUDA's link stubs).
  std::vector<std::string> libraries;
  std::vector<std::filesystem::path> library_dirs;
};

// The host compiler as build_info.json records it.
struct HostCompiler {
  std::string id;       // "gcc", "clang", "msvc"
  std::string version;  // "12.2.0", "14.44.35207"
};

class HostToolchain {
 public:
  virtual ~HostToolchain() = default;
  // The wheel platform tag the outputs are for ("linux_x86_64", "win_amd64").
  virtual std::string platform_tag() const = 0;
  virtual HostCompiler host_compiler() const = 0;
  // What an object depends on of the toolchain: the compilers, their
  // versions and the options that change their output.  It enters every
  // object key: "nvcc 13.0.88 / gcc 12.2.0".
  virtual std::string identity() const = 0;
  virtual std::string object_suffix() const = 0;  // ".o", ".obj"
  // The extension module's file name: its last name component ("_C") and
  // the suffix the interpreter looks for.
  virtual std::string extension_filename(const std::string& stem, wheel::AbiMode abi,
                                         const PythonVersion& python) const = 0;
  // Throw UsageError for a host flag they cannot translate.
  virtual std::vector<std::string> compile_command(const CompileJob& job) const = 0;
  virtual std::vector<std::string> link_command(const LinkJob& job) const = 0;
  // The line ninja runs for `argv`, which writes `temp`: argv, then the
  // rename of temp to output, in the host's syntax.
  virtual std::string run_then_move(const std::vector<std::string>& argv, const std::filesystem::path& temp,
                                    const std::filesystem::path& output) const = 0;
};

// nvcc's option that compiles a unit's archs side by side on up to
// `job.device_threads` threads (--threads).  A cold build ends with its
// longest unit alone on the machine; this lets it use the cores the others
// have left.  The device code is the same for any count (the host object
// differs only in nvcc's temporary file name, a local symbol the link drops),
// so the count is not in the object's key.
std::vector<std::string> nvcc_thread_flags(const CompileJob& job);

}  // namespace sb::toolchain
