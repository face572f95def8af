#include "sagebuild/toolchain/cross_resolver.h"

#include <algorithm>
#include <regex>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/toolchain/cache.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/gnu_toolchain.h"
#include "sagebuild/toolchain/host_compiler.h"
#include "sagebuild/toolchain/provision.h"
#include "sagebuild/toolchain/wheel_unpack.h"

namespace sb::toolchain {

namespace fs = std::filesystem;
using run::Command;
using run::Result;

std::vector<std::string> sbsa_wheel_requirements(const matrix::CudaVersion& cuda) {
  if (!cuda_provision_blocker(cuda).empty() || cuda.major != 13)
    throw UsageError(
        "a cross build for linux_aarch64 takes CUDA's aarch64 headers and libraries from NVIDIA's CUDA 13 "
        "wheels on PyPI, not CUDA " +
        cuda.release_str() + "; build this row on an aarch64 machine");
  std::vector<std::string> reqs;
  // nvidia-cuda-nvcc for its include/fatbinary_section.h (the stub nvcc
  // writes includes it); its aarch64 binaries are not unpacked.
  for (const char* n : {"nvidia-cuda-runtime", "nvidia-cuda-cccl", "nvidia-cuda-crt", "nvidia-cuda-nvcc"})
    reqs.push_back(std::string(n) + "==" + cuda.release_str() + ".*");
  return reqs;
}

std::vector<std::string> sbsa_target_files() {
  std::vector<std::string> files;
  for (const char* f : {"include/cuda_runtime.h", "include/cuda_fp16.h", "include/cuda_bf16.h", "include/cuda_fp8.h",
                        "include/crt/host_config.h", "include/fatbinary_section.h", "include/cccl/nv/target",
                        "include/cccl/cuda/std/cstdint", "lib/libcudart_static.a"})
    files.push_back(std::string(kSbsaTargetDir) + "/" + f);
  return files;
}

fs::path cross_cuda_cache_entry(const fs::path& cache_dir, const matrix::CudaVersion& cuda) {
  return cache_dir / "cuda" / (cuda.release_str() + "-sbsa-linux");
}

namespace {

// Hard links where the host toolkit shares the cache's file system, else copies.
void link_or_copy_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& e : fs::recursive_directory_iterator(from)) {
    fs::path dest = to / fs::relative(e.path(), from);
    if (e.is_directory()) {
      fs::create_directories(dest);
      continue;
    }
    std::error_code ec;
    fs::create_hard_link(fs::canonical(e.path()), dest, ec);
    if (ec) fs::copy_file(e.path(), dest, fs::copy_options::overwrite_existing);
  }
}

}  // namespace

fs::path provision_cross_cuda(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& py,
                              const fs::path& host_cuda_home, const matrix::CudaVersion& cuda) {
  const std::vector<std::string> reqs = sbsa_wheel_requirements(cuda);
  fs::path entry = cross_cuda_cache_entry(opt.cache_dir, cuda);
  fs::create_directories(entry.parent_path());
  fill_once(entry, [&](const fs::path& tmp) {
    fs::path dl = tmp / ".downloads";
    fs::create_directories(dl);
    std::vector<std::string> argv = {
        py.executable.string(), "-m",   "pip",    "download", "--no-deps", "--only-binary=:all:",
        "--python-version",     "3.12", "--dest", dl.string()};
    for (const auto& p : pip_platforms("linux_aarch64")) argv.insert(argv.end(), {"--platform", p});
    argv.insert(argv.end(), reqs.begin(), reqs.end());
    Command c(argv);
    c.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
    c.stream_output = true;
    Result r = runner.run(c);
    if (!r.ok())
      throw UsageError("cannot download CUDA " + cuda.release_str() + "'s aarch64 wheels from PyPI (pip exit " +
                       std::to_string(r.exit_code) + "): " + r.err.substr(r.err.size() > 600 ? r.err.size() - 600 : 0) +
                       "\n  fix: check the network to PyPI, or build the row on an aarch64 machine");
    const fs::path target = tmp / kSbsaTargetDir;
    std::vector<fs::path> wheels;
    for (const auto& e : fs::directory_iterator(dl))
      if (e.path().extension() == ".whl") wheels.push_back(e.path());
    std::sort(wheels.begin(), wheels.end());
    for (const auto& w : wheels)
      unpack_wheel(w, target, {{"nvidia/cu13/include/", "nvidia/cu13/"}, {"nvidia/cu13/lib/", "nvidia/cu13/"}});
    fs::remove_all(dl);
    link_or_copy_tree(host_cuda_home / "bin", tmp / "bin");
    fs::create_directory_symlink(fs::canonical(host_cuda_home / "nvvm"), tmp / "nvvm");
    std::string missing;
    for (const auto& f : sbsa_target_files())
      if (!fs::exists(tmp / f)) missing += (missing.empty() ? "" : ", ") + f;
    for (const char* f : {"bin/nvcc", "bin/nvcc.profile", "nvvm/bin/cicc"})
      if (!fs::exists(tmp / f)) missing += (missing.empty() ? "" : ", ") + std::string(f);
    if (!missing.empty())
      throw UsageError("the CUDA " + cuda.release_str() + " cross home (host nvcc " + host_cuda_home.string() +
                       ", aarch64 wheels from PyPI) lacks " + missing + "\n  fix: pass --cuda-home with a full CUDA " +
                       cuda.release_str() + " toolkit for this host");
  });
  return entry;
}

namespace {

// Debian's python3-dev installs a multiarch pyconfig.h that dispatches on the
// target: compiled for aarch64 it includes
// <aarch64-linux-gnu/python3.X/pyconfig.h>, which only libpython3.X-dev:arm64
// installs.  The missing file, or empty where the headers have one
// pyconfig.h (pyenv's, python.org's) or the aarch64 one is there.
std::string missing_aarch64_pyconfig(const fs::path& include_dir) {
  std::error_code ec;
  fs::path wrapper = include_dir / "pyconfig.h";
  if (!fs::is_regular_file(wrapper, ec)) return "";
  std::string text = read_file(wrapper);
  static const std::regex kTarget(R"(#\s*include\s*<(aarch64-linux-gnu/python[0-9.]+/pyconfig\.h)>)");
  std::smatch m;
  if (!std::regex_search(text, m, kTarget)) return "";
  fs::path target = include_dir.parent_path() / m[1].str();
  return fs::exists(target, ec) ? "" : target.string();
}

}  // namespace

struct CrossResolver::Found {
  std::optional<PythonInfo> python;
  std::optional<CudaToolkit> host_cuda;
  fs::path cross_home;
  std::optional<TorchInstall> torch;
  std::optional<CompilerId> cxx_id;
  fs::path cxx;
  bool placeholders = false;
  std::vector<Check> checks;
  std::vector<std::string> problems;
  void fail(Check c) {
    problems.push_back(c.what + ": " + c.found + "\n    fix: " + c.fix);
    checks.push_back(std::move(c));
  }
};

CrossResolver::CrossResolver(ProcessRunner& runner, ToolchainOptions options)
    : runner_(runner), opt_(std::move(options)) {}

void CrossResolver::discover(const matrix::Row& row, bool provision, Found& f) {
  if (row.abi_mode != wheel::AbiMode::abi3) {
    f.fail({false, "cross build for " + row.platform, "row " + row.id + " is per-interpreter",
            "a cross build takes the host Python's headers, so it builds abi3 rows only; build this row on an "
            "aarch64 machine"});
    return;
  }
  // Python: its headers (the limited API is the same on every LP64 Linux)
  // and its pip, which downloads the aarch64 wheels.
  std::string exe = opt_.python ? opt_.python->string() : "python3";
  if (auto p = run::find_program(exe, opt_.path_env)) {
    try {
      f.python = query_python_cached(runner_, *p, opt_.cache_dir);
    } catch (const UsageError&) {
    }
  }
  if (!f.python || !f.python->has_headers || f.python->major != 3 || f.python->minor < 9) {
    f.fail({false, "Python headers (abi3)", f.python ? f.python->executable.string() + " without Python.h" : exe,
            "install python3-dev, or pass --python with a CPython >= 3.9 that has its headers"});
    return;
  }
  if (std::string missing = missing_aarch64_pyconfig(f.python->include_dir); !missing.empty()) {
    std::string ver = std::to_string(f.python->major) + "." + std::to_string(f.python->minor);
    f.fail({false, "Python headers (abi3) for aarch64",
            (f.python->include_dir / "pyconfig.h").string() + " is Debian's multiarch header and " + missing +
                " is missing, so Python.h cannot compile for aarch64",
            "sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo apt-get install libpython" + ver +
                "-dev:arm64 (scripts/install-deps.sh with SAGE_WITH_AARCH64=1), or pass --python with a CPython "
                "whose headers have one pyconfig.h (pyenv's, python.org's)"});
    return;
  }
  f.checks.push_back({true, "Python headers (abi3)", f.python->executable.string() + " " + f.python->version(), ""});
  // The host's nvcc of the row's CUDA, else the one sagebuild provisions.
  CudaFound found =
      toolchain::find_cuda(runner_, CudaSearch{opt_.cuda_home, opt_.cuda_home_env, opt_.path_env}, row.cuda);
  if (found.toolkit) {
    f.host_cuda = found.toolkit;
  } else if (fs::exists(cuda_cache_entry(opt_.cache_dir, row.cuda) / "bin/nvcc")) {
    fs::path home = cuda_cache_entry(opt_.cache_dir, row.cuda);
    f.host_cuda = CudaToolkit{home, home / "bin/nvcc", query_nvcc(runner_, home / "bin/nvcc"), "cache (PyPI wheels)"};
  } else if (provision) {
    fs::path home = provision_cuda(runner_, opt_, *f.python, row.cuda, "linux_x86_64");
    f.host_cuda = CudaToolkit{home, home / "bin/nvcc", query_nvcc(runner_, home / "bin/nvcc"), "provisioned"};
  } else {
    f.fail({false, "CUDA " + row.cuda.release_str() + " (host nvcc)",
            "no nvcc " + row.cuda.release_str() + " in --cuda-home, CUDA_HOME or PATH",
            "install CUDA " + row.cuda.release_str() + " or let `sagebuild build` provision it from PyPI"});
    return;
  }
  f.cross_home = cross_cuda_cache_entry(opt_.cache_dir, row.cuda);
  if (!fs::exists(f.cross_home) && provision)
    f.cross_home = provision_cross_cuda(runner_, opt_, *f.python, f.host_cuda->home, row.cuda);
  bool have_cross = fs::exists(f.cross_home / "bin/nvcc");
  if (!have_cross) f.placeholders = true;
  f.checks.push_back({true, "CUDA " + row.cuda.release_str() + " for aarch64",
                      f.host_cuda->nvcc.string() + " " + f.host_cuda->version.full_str() + " (" + f.host_cuda->origin +
                          "), " + kSbsaTargetDir + " in " + f.cross_home.string() +
                          (have_cross ? "" : " (to be provisioned from NVIDIA's aarch64 wheels)"),
                      ""});
  // torch: the row's own aarch64 wheel, unpacked (never the Python's own).
  if (auto cached = cached_torch(opt_.cache_dir, row)) {
    TorchInstall t = read_torch_dir(*cached);
    t.origin = "cache";
    f.torch = t;
  } else if (provision) {
    f.torch = provision_torch(runner_, opt_, *f.python, row);
  } else {
    TorchInstall t;
    t.root = torch_cache_root(opt_.cache_dir, row) / (row.torch.str() + "-" + row.cuda_tag + "-<wheel sha>") / "torch";
    t.version = row.torch.str();
    t.cuda = row.cuda.release_str();
    t.cxx11_abi = true;
    t.origin = "to be provisioned: pip download --no-deps --platform manylinux_2_28_aarch64 torch==" + row.torch.str();
    f.torch = t;
    f.placeholders = true;
  }
  if (f.torch->release() != row.torch || f.torch->cuda != row.cuda.release_str()) {
    f.fail({false, "torch " + row.torch.str() + " for CUDA " + row.cuda.release_str() + " (aarch64)",
            f.torch->root.string() + " is torch " + f.torch->version + " for CUDA " + f.torch->cuda,
            "remove it from the cache, or pass --torch-wheel with torch " + row.torch.str() + "'s aarch64 CUDA wheel"});
    return;
  }
  f.checks.push_back({true, "torch " + row.torch.str() + " for CUDA " + row.cuda.release_str() + " (aarch64)",
                      f.torch->root.string() + " (" + f.torch->origin + ")", ""});
  // The target's compiler: --host-compiler, else aarch64-linux-gnu-g++.
  std::string cxx = opt_.host_compiler ? opt_.host_compiler->string() : "aarch64-linux-gnu-g++";
  auto path = run::find_program(cxx, opt_.path_env);
  Result r = path ? runner_.run(Command{{path->string(), "--version"}}) : Result{};
  auto id = path && r.ok() ? parse_compiler_version(r.out) : std::nullopt;
  if (!id) {
    f.fail({false, "aarch64 host compiler", cxx + " not found or not answering --version",
            "install Debian's g++-aarch64-linux-gnu (scripts/install-deps.sh does), or pass --host-compiler PATH"});
    return;
  }
  if (auto range = supported_range(row.cuda, id->id))
    if (auto msg = check_range(*id, *range, row.cuda); !msg.empty()) {
      f.fail({false, "aarch64 host compiler", path->string(), msg});
      return;
    }
  f.cxx = *path;
  f.cxx_id = id;
  f.checks.push_back({true, "aarch64 host compiler", path->string() + " (" + id->id + " " + id->version() + ")", ""});
}

RowToolchain CrossResolver::resolve(const matrix::Row& row, const std::optional<matrix::TorchVersion>&) {
  Found f;
  discover(row, opt_.provision, f);
  if (!f.problems.empty()) {
    std::string msg = "row " + row.id + ": the cross toolchain is incomplete:";
    for (const auto& s : f.problems) msg += "\n  " + s;
    throw UsageError(msg);
  }
  RowToolchain t;
  const fs::path target = f.cross_home / kSbsaTargetDir;
  t.host = std::make_shared<GnuToolchain>(GnuTools{f.cross_home / "bin/nvcc",
                                                   f.host_cuda->version.full_str(),
                                                   f.cxx,
                                                   {f.cxx_id->id, f.cxx_id->version()},
                                                   "aarch64"});
  t.nvcc_version = f.host_cuda->version.full_str();
  t.cuda_include = target / "include";
  t.cuda_lib = target / "lib";
  t.torch = TorchHeaders{f.torch->root, f.torch->version, f.torch->cxx11_abi};
  t.row_torch_cuda = f.torch->cuda;
  t.python_include = f.python->include_dir;
  t.python_version = f.python->version();
  t.torch_importable = false;  // an aarch64 extension cannot load here
  t.smoke_python = std::nullopt;
  t.placeholders = false;  // the cache paths are real, only not filled yet in a dry run
  t.checks = std::move(f.checks);
  return t;
}

std::vector<Check> CrossResolver::diagnose(const matrix::Row& row) {
  Found f;
  try {
    discover(row, false, f);
  } catch (const std::exception& e) {
    f.checks.push_back({false, "cross toolchain", e.what(), "see the message"});
  }
  return f.checks;
}

ProvisionedHeaders CrossResolver::headers(const HeaderPackage& package, const matrix::Row& row, Check&) {
  throw UsageError("row " + row.id + ": header package " + package.requirement() +
                   " is not provisioned for cross builds; build this row on an aarch64 machine");
}

}  // namespace sb::toolchain
