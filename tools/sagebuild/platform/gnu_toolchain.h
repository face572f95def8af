// The Linux toolchain behind the same interface: nvcc driving g++ (or
// clang++) for .cu files, the same compiler for C++ bindings and the link.
#pragma once

#include <string>

#include "sagebuild/platform/toolchain.h"

namespace sb::platform {

struct GnuTools {
  std::string nvcc;         // /usr/local/cuda-12.9/bin/nvcc
  std::string cxx;          // /usr/bin/g++-13
  std::string arch = "x86_64";  // or "aarch64"
};

class GnuToolchain final : public HostToolchain {
 public:
  explicit GnuToolchain(GnuTools tools) : tools_(std::move(tools)) {}
  // The plain tag; the wheel step retags it manylinux_* after auditing.
  std::string platform_tag() const override { return "linux_" + tools_.arch; }
  std::vector<std::string> compile_command(const CompileJob& job) const override;
  std::vector<std::string> link_command(const LinkJob& job) const override;
  // abi3: "_C.abi3.so"; per-interpreter: "_C.cpython-312-x86_64-linux-gnu.so".
  std::string extension_filename(AbiMode abi, const PythonVersion& python) const override;

 private:
  GnuTools tools_;
};

}  // namespace sb::platform
