// What `sagebuild build` downloads when the machine lacks it, into the cache
// (cache.h): the row's torch wheel (headers and libraries, unpacked) and a
// CUDA 13 home assembled from NVIDIA's wheels on PyPI; and the facts read from
// the index without downloading (torch/version.py by HTTP ranges).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/toolchain/python_env.h"
#include "sagebuild/toolchain/resolver.h"
#include "sagebuild/toolchain/torch.h"

namespace sb::toolchain {

// The index a row's torch comes from: --torch-index, else the row's own,
// else pip's default (default_index_url()); no trailing slash.
std::string torch_index_for(const ToolchainOptions& opt, const matrix::Row& row);

// The torch wheel's unpacked tree in the cache: <cache>/torch/<version>-cu<XY>-<sha16>/torch.
// Downloads with `<python> -m pip download` (from torch_index_for()) unless a
// --torch-wheel matches.
TorchInstall provision_torch(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& pip_python,
                             const matrix::Row& row);
// <cache>/torch, or <cache>/torch-linux_aarch64 for a linux_aarch64 row.
std::filesystem::path torch_cache_root(const std::filesystem::path& cache_dir, const matrix::Row& row);
// An already provisioned torch for the row, if any.
std::optional<std::filesystem::path> cached_torch(const std::filesystem::path& cache_dir, const matrix::Row& row);

// Any torch in the cache or `python`'s, of a release >= `min` built for
// `cuda`: the headers and libraries a stable-ABI binding can compile against.
std::optional<TorchInstall> stable_abi_torch(const std::filesystem::path& cache_dir,
                                             const std::optional<PythonInfo>& python, const matrix::CudaVersion& cuda,
                                             const matrix::TorchVersion& min);

// torch/version.py of the row's torch wheel on the index, read with range
// requests; throws IoError (RangeNotSupported; no network; not on the index)
// when it cannot tell, UsageError when the wheel is not the row's CUDA build.
std::string remote_torch_version_py(ProcessRunner& runner, const ToolchainOptions& opt, const matrix::Row& row);

// <cache>/cuda/<X.Y>: NVIDIA's wheels for `platform` ("linux_x86_64",
// "win_amd64": the host's, which runs nvcc) downloaded with `<pip_python> -m
// pip download` and unpacked into a CUDA home nvcc accepts, holding every file
// of cuda_home_files(platform); filled once.  Throws UsageError when pip
// cannot get the wheels, when they lack one of those files, or for a
// platform or CUDA that PyPI's wheels cannot make a home of.
std::filesystem::path provision_cuda(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& pip_python,
                                     const matrix::CudaVersion& cuda, const std::string& platform);
// Where provision_cuda puts CUDA `cuda` (<cache>/cuda/13.0): one per cache,
// whose host has one platform.
std::filesystem::path cuda_cache_entry(const std::filesystem::path& cache_dir, const matrix::CudaVersion& cuda);

// <cache>/headers/<name>-<version>: the package's wheel from PyPI (pip
// download --no-deps, asked for `platform`, the rows' "linux_x86_64" or
// "win_amd64"), its include directories unpacked, filled once.  The wheel
// must be pure (platform tag `any`): one entry then serves Linux and Windows
// rows alike.  Returns the entry; throws UsageError when pip cannot get it,
// the wheel is platform-specific, or it lacks a directory the package names.
std::filesystem::path provision_headers(ProcessRunner& runner, const ToolchainOptions& opt,
                                        const PythonInfo& pip_python, const HeaderPackage& package,
                                        const std::string& platform);
// The header packages of the CUDA libraries `libraries` ("cublas",
// "cusparse", "cusolver": the names of the cuda-toolkit package's extras) for
// CUDA `cuda` ("13.0") on `platform`: NVIDIA's wheels at the versions that
// CUDA release pins (cuda_library_pins), their include/ directory.  Headers
// only: nothing of them is linked.  Throws UsageError for a library or a CUDA
// release without pins here, naming where to read them.
std::vector<HeaderPackage> cuda_library_headers(const matrix::CudaVersion& cuda,
                                                const std::vector<std::string>& libraries, const std::string& platform);
// What provides `header` (as an #include names it: "cublas_v2.h",
// "cutlass/cutlass.h") for a row of CUDA `cuda`: a sentence naming the wheel
// and the package of a full install, or empty when it is none sagebuild knows.
std::string header_provider(const std::string& header, const matrix::CudaVersion& cuda);

// The libraries cuda_library_headers knows.
const std::vector<std::string>& known_cuda_libraries();

// Where provision_headers puts the package.
std::filesystem::path headers_entry(const std::filesystem::path& cache_dir, const HeaderPackage& package);

// A row's header package, for either resolver: the cache's entry when there;
// else provisioned (opt.provision) with the pip of `pip_python()`, which
// throws UsageError when there is no such Python; else, for a dry run
// (opt.plan_only), the entry a build fills, downloading nothing; else (doctor)
// a check that fails.  `check` says which.  `runner` runs pip.
ProvisionedHeaders provide_headers(ProcessRunner& runner, const ToolchainOptions& opt, const HeaderPackage& package,
                                   const matrix::Row& row, const std::function<PythonInfo()>& pip_python, Check& check);

// The manylinux platform tags pip may pick a wheel for, for a row's platform tag.
std::vector<std::string> pip_platforms(const std::string& platform_tag);

}  // namespace sb::toolchain
