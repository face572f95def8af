// The Linux toolchain: nvcc driving g++ (or clang++) for .cu files, the same
// compiler for the binding and the link (host_toolchain.h).
#pragma once

#include <filesystem>
#include <string>

#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/host_toolchain.h"

namespace sb::toolchain {

struct GnuTools {
  std::filesystem::path nvcc;   // /usr/local/cuda-13.0/bin/nvcc
  std::string nvcc_version;     // "13.0.88", from nvcc --version
  std::filesystem::path cxx;    // /usr/bin/g++-12
  HostCompiler compiler;        // {"gcc", "12.2.0"}, from cxx --version
  std::string arch = "x86_64";  // or "aarch64"
};

class GnuToolchain final : public HostToolchain {
 public:
  explicit GnuToolchain(GnuTools tools) : tools_(std::move(tools)) {}
  std::string platform_tag() const override { return "linux_" + tools_.arch; }
  HostCompiler host_compiler() const override { return tools_.compiler; }
  std::string identity() const override;
  std::string object_suffix() const override { return ".o"; }
  // abi3: "_C.abi3.so"; per-interpreter: "_C.cpython-312-x86_64-linux-gnu.so".
  std::string extension_filename(const std::string& stem, wheel::AbiMode abi,
                                 const PythonVersion& python) const override {
    return abi == wheel::AbiMode::abi3 ? stem + ".abi3.so"
                                       : stem + ".cpython-" + python.nodot() + "-" + tools_.arch + "-linux-gnu.so";
  }
  std::vector<std::string> compile_command(const CompileJob& job) const override;
  std::vector<std::string> link_command(const LinkJob& job) const override;
  // argv, then `mv -f temp output`, as ninja's /bin/sh runs it.
  std::string run_then_move(const std::vector<std::string>& argv, const std::filesystem::path& temp,
                            const std::filesystem::path& output) const override {
    return run::shell_run_then_move(argv, temp.string(), output.string());
  }

 private:
  std::vector<std::string> nvcc_command(const CompileJob& job) const;
  std::vector<std::string> cxx_command(const CompileJob& job) const;
  GnuTools tools_;
};

}  // namespace sb::toolchain
