// A Linux row's toolchain (resolver.h), found or provisioned: CUDA (nvcc of
// the row's version: --cuda-home, CUDA_HOME, PATH, the cache, else NVIDIA's
// wheels), the row's torch build (the Python's, the cache's, else PyPI's
// wheel), a host compiler nvcc accepts, and Python headers.  `sagebuild
// doctor` prints the same checks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/host_compiler.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::toolchain {

class GnuResolver final : public RowResolver {
 public:
  GnuResolver(ProcessRunner& runner, ToolchainOptions options);
  RowToolchain resolve(const matrix::Row& row, const std::optional<matrix::TorchVersion>& stable_min_torch) override;
  std::vector<Check> diagnose(const matrix::Row& row) override;
  ProvisionedHeaders headers(const HeaderPackage& package, const matrix::Row& row, Check& check) override;
  ProcessRunner& build_runner() override { return runner_; }

 private:
  // What has been found for one row so far; each step adds to it.
  struct Found {
    std::optional<PythonInfo> pip_python;    // --python or python3: answers for pip and torch
    std::optional<PythonInfo> python;        // the headers' Python
    std::optional<PythonInfo> torch_python;  // imports the row's torch
    std::optional<CudaToolkit> cuda;
    std::optional<TorchInstall> torch;
    std::string row_torch_cuda, row_torch_check;
    std::optional<CompilerId> host;
    std::filesystem::path host_cxx;
    std::vector<Check> checks;
    std::vector<std::string> problems;
    void fail(Check c);
  };
  Found discover(const matrix::Row& row, bool provision, const std::optional<matrix::TorchVersion>& stable_min_torch);
  void find_python(const matrix::Row& row, Found& f);
  void find_cuda(const matrix::Row& row, bool provision, Found& f);
  void provision_or_plan_cuda(const matrix::Row& row, bool provision, const std::string& tried, Found& f);
  void plan_missing_cuda(const matrix::Row& row, const std::string& why, Found& f);
  void find_torch(const matrix::Row& row, bool provision, const std::optional<matrix::TorchVersion>& stable_min_torch,
                  Found& f);
  void use_stable_abi_torch(const matrix::Row& row, bool provision, TorchInstall headers, Found& f);
  void use_torch(const matrix::Row& row, TorchInstall t, Found& f);
  void find_host_compiler(const matrix::Row& row, Found& f);
  RowToolchain toolchain_of(Found& f) const;
  std::optional<PythonInfo> python_named(const std::string& exe);

  ProcessRunner& runner_;
  ToolchainOptions opt_;
  std::map<std::string, std::optional<PythonInfo>> pythons_;  // memoized queries
};

}  // namespace sb::toolchain
