// A linux_aarch64 row built on a linux_x86_64 host: the host's
// nvcc with aarch64-linux-gnu-g++ as its host compiler, in a CUDA home whose
// targets/sbsa-linux tree (headers, libcudart_static.a) comes from NVIDIA's
// aarch64 wheels on PyPI; the row's torch from its aarch64 wheel, unpacked,
// never imported; the binding and the link by aarch64-linux-gnu-g++.  No
// emulation: nothing built is run here (the smoke test is
// scripts/aarch64-smoke.sh's, under qemu).  abi3 rows only: a
// per-interpreter row would need the target Python's own headers.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/toolchain/resolver.h"

namespace sb::toolchain {

// nvcc picks targets/sbsa-linux when its host compiler is an aarch64 one.
inline constexpr const char* kSbsaTargetDir = "targets/sbsa-linux";

// The wheels whose nvidia/cu13/include and lib make targets/sbsa-linux.
std::vector<std::string> sbsa_wheel_requirements(const matrix::CudaVersion& cuda);

// What a cross home must hold besides the host nvcc's own files.
std::vector<std::string> sbsa_target_files();

// <cache>/cuda/<X.Y>-sbsa-linux: bin/ (hard links to, else copies of, the
// host toolkit's bin/, since nvcc finds targets/ beside its own real
// directory), nvvm -> the host's nvvm/, and targets/sbsa-linux from the
// aarch64 wheels downloaded with `<python> -m pip download`.  Filled once;
// throws UsageError when pip fails or a file of sbsa_target_files() is
// missing.
std::filesystem::path provision_cross_cuda(ProcessRunner& runner, const ToolchainOptions& opt,
                                           const PythonInfo& pip_python, const std::filesystem::path& host_cuda_home,
                                           const matrix::CudaVersion& cuda);
std::filesystem::path cross_cuda_cache_entry(const std::filesystem::path& cache_dir, const matrix::CudaVersion& cuda);

class CrossResolver final : public RowResolver {
 public:
  CrossResolver(ProcessRunner& runner, ToolchainOptions options);
  RowToolchain resolve(const matrix::Row& row, const std::optional<matrix::TorchVersion>& stable_min_torch) override;
  std::vector<Check> diagnose(const matrix::Row& row) override;
  ProvisionedHeaders headers(const HeaderPackage& package, const matrix::Row& row, Check& check) override;
  ProcessRunner& build_runner() override { return runner_; }

 private:
  struct Found;
  void discover(const matrix::Row& row, bool provision, Found& f);
  ProcessRunner& runner_;
  ToolchainOptions opt_;
};

}  // namespace sb::toolchain
