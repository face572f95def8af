#include "sagebuild/toolchain/provision.h"

#include <algorithm>
#include <map>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/toolchain/cache.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/remote_wheel.h"
#include "sagebuild/toolchain/wheel_unpack.h"
#include "sagebuild/wheel/filename.h"

namespace sb::toolchain {

namespace fs = std::filesystem;
using run::Command;
using run::Result;

std::vector<std::string> pip_platforms(const std::string& tag) {
  if (tag == "linux_x86_64")
    return {"manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
            "manylinux2014_x86_64",  "manylinux_2_12_x86_64", "manylinux2010_x86_64"};
  if (tag == "linux_aarch64")
    return {"manylinux_2_28_aarch64", "manylinux_2_27_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"};
  if (tag == "win_amd64") return {"win_amd64"};
  throw UsageError("provisioning from PyPI is implemented for linux_x86_64, linux_aarch64 and win_amd64 rows, not " +
                   tag + ": install CUDA and torch and pass --cuda-home and --python");
}

namespace {

// `index`: empty for pip's own (PIP_INDEX_URL or PyPI).
Result pip_download(ProcessRunner& runner, const PythonInfo& py, const matrix::Row& row, const fs::path& dest,
                    const std::vector<std::string>& requirements, const std::string& python_version,
                    const std::string& index = {}) {
  std::vector<std::string> argv = {
      py.executable.string(), "-m",           "pip",    "download",   "--no-deps", "--only-binary=:all:",
      "--python-version",     python_version, "--dest", dest.string()};
  if (!index.empty()) {
    argv.push_back("--index-url");
    argv.push_back(index);
  }
  for (const auto& p : pip_platforms(row.platform)) {
    argv.push_back("--platform");
    argv.push_back(p);
  }
  argv.insert(argv.end(), requirements.begin(), requirements.end());
  Command c(argv);
  c.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
  // A torch wheel is ~1-4 GB: pip's lines (what it collects, from where, how
  // big, when saved) show as they come, not once it is over.
  c.stream_output = true;
  return runner.run(c);
}

std::vector<fs::path> wheels_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".whl") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string torch_index_for(const ToolchainOptions& opt, const matrix::Row& row) {
  std::string u = !opt.torch_index.empty()   ? opt.torch_index
                  : !row.torch_index.empty() ? row.torch_index
                                             : default_index_url();
  while (!u.empty() && u.back() == '/') u.pop_back();
  return u;
}

// Another platform's torch (an aarch64 wheel, cross-compiled here) has its
// own folders: the same release and CUDA tag name both builds.
fs::path torch_cache_root(const fs::path& cache_dir, const matrix::Row& row) {
  return cache_dir / (row.platform == "linux_aarch64" ? "torch-linux_aarch64" : "torch");
}

std::optional<fs::path> cached_torch(const fs::path& cache_dir, const matrix::Row& row) {
  fs::path dir = torch_cache_root(cache_dir, row);
  if (!fs::exists(dir)) return std::nullopt;
  std::string prefix = row.torch.str() + "-" + row.cuda_tag + "-";
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find(".tmp") == std::string::npos &&
        name.find(".lock") == std::string::npos && fs::exists(e.path() / "torch/version.py"))
      return e.path() / "torch";
  }
  return std::nullopt;
}

namespace {

// The check every path shares: the wheel's own torch/version.py names the
// row's release and CUDA.  Returns the CUDA; throws UsageError.
std::string check_version_py(const std::string& vpy, const std::string& what, const matrix::Row& row) {
  auto wver = parse_version_py(vpy, "__version__");
  auto wcuda = parse_version_py(vpy, "cuda");
  if (!wver || matrix::TorchVersion::parse_installed(*wver) != row.torch)
    throw UsageError(what + " is torch " + wver.value_or("?") + ", the row needs torch " + row.torch.str());
  if (wcuda.value_or("") != row.cuda.release_str())
    throw UsageError(what + " is torch " + *wver + " built for CUDA " + wcuda.value_or("none") + ", but row " + row.id +
                     " needs CUDA " + row.cuda.release_str() + "; fix: take torch from PyTorch's index for CUDA " +
                     row.cuda.release_str() + " (--torch-index https://download.pytorch.org/whl/" + row.cuda_tag +
                     "), or pass that build's wheel with --torch-wheel");
  return *wcuda;
}

}  // namespace

std::optional<TorchInstall> stable_abi_torch(const fs::path& cache_dir, const std::optional<PythonInfo>& python,
                                             const matrix::CudaVersion& cuda, const matrix::TorchVersion& min) {
  auto serves = [&](const std::string& version, const std::string& its_cuda) {
    auto v = matrix::TorchVersion::parse_installed(version);
    return v && v->minor_release() >= min.minor_release() && its_cuda == cuda.release_str();
  };
  if (python && python->torch && serves(python->torch->version, python->torch->cuda)) {
    TorchInstall t = read_torch_dir(python->torch->dir);
    t.origin = "python " + python->executable.string() + ", for the stable ABI";
    return t;
  }
  fs::path dir = cache_dir / "torch";
  if (!fs::exists(dir)) return std::nullopt;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.find(".tmp") == std::string::npos && name.find(".lock") == std::string::npos &&
        fs::exists(e.path() / "torch/version.py"))
      entries.push_back(e.path());
  }
  std::sort(entries.begin(), entries.end());  // the same choice on every run
  for (const auto& e : entries) {
    TorchInstall t;
    try {
      t = read_torch_dir(e / "torch");
    } catch (const UsageError&) {
      continue;
    }
    if (!serves(t.version, t.cuda)) continue;
    t.origin = "cache (" + e.filename().string() + "), for the stable ABI";
    return t;
  }
  return std::nullopt;
}

std::string remote_torch_version_py(ProcessRunner& runner, const ToolchainOptions& opt, const matrix::Row& row) {
  fs::path scratch = opt.cache_dir / "tmp" / ("probe-" + row.torch.str() + "-" + row.cuda_tag);
  std::string page = torch_index_for(opt, row) + "/torch/";
  auto files = parse_simple_index_json(http_get(runner, page, "application/vnd.pypi.simple.v1+json", scratch), page);
  std::vector<std::string> tags;  // newest Python first, as provision_torch downloads
  for (auto it = row.pythons.rbegin(); it != row.pythons.rend(); ++it) tags.push_back("cp" + it->nodot());
  auto wheel = pick_wheel(files, "torch", row.torch.str(), tags, pip_platforms(row.platform));
  if (!wheel) throw IoError(page + " lists no torch " + row.torch.str() + " wheel for " + row.platform);
  if (wheel->size == 0) throw RangeNotSupported(page + " does not give the size of " + wheel->filename);
  RangeSource src(wheel->size, http_range_fetch(runner, wheel->url, scratch));
  std::string vpy = read_zip_member(src, "torch/version.py");
  std::error_code ec;
  fs::remove_all(scratch, ec);
  check_version_py(vpy, wheel->url, row);
  return vpy;
}

TorchInstall provision_torch(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& py,
                             const matrix::Row& row) {
  fs::path wheel;
  // A local wheel the user pointed at, when it is this release.
  for (const auto& w : opt.torch_wheels) {
    std::string name = w.filename().string();
    if (name.rfind("torch-" + row.torch.str() + "-", 0) == 0 || name.rfind("torch-" + row.torch.str() + "+", 0) == 0) {
      wheel = w;
      break;
    }
  }
  // One folder per build (a cu126 and a cu130 wheel of one release differ).
  fs::path downloads =
      opt.cache_dir / "downloads" /
      ("torch-" + row.torch.str() + "-" + row.cuda_tag + (row.platform == "linux_aarch64" ? "-linux_aarch64" : ""));
  if (wheel.empty()) {
    fs::create_directories(downloads);
    FileLock lock(downloads.string() + ".lock");
    auto have = wheels_in(downloads);
    if (have.empty()) {
      // The headers and libraries are the same for every CPython tag: take
      // pip's Python's when the row serves it (--provision-torch installs
      // that very wheel into its environment), else the newest the row serves.
      bool serves = std::find(row.pythons.begin(), row.pythons.end(), py.release()) != row.pythons.end();
      std::string pyver = (serves ? py.release() : row.pythons.empty() ? row.build_python : row.pythons.back()).str();
      std::string index = torch_index_for(opt, row);
      Result r = pip_download(runner, py, row, downloads, {"torch==" + row.torch.str()}, pyver, index);
      if (!r.ok())
        throw UsageError(
            "cannot download torch " + row.torch.str() + " for " + row.platform + " from " + index + " (pip exit " +
            std::to_string(r.exit_code) + "): " + r.err.substr(r.err.size() > 600 ? r.err.size() - 600 : 0) +
            "\n  fix: pass --torch-index with an index that serves torch " + row.torch.str() + " for CUDA " +
            row.cuda.release_str() + ", --python with a Python that has it, or --torch-wheel FILE with the wheel");
      have = wheels_in(downloads);
    }
    if (have.empty()) throw UsageError("pip reported success but left no torch wheel in " + downloads.string());
    wheel = have.front();
  }
  std::string sha = hex(sha256_file(wheel)).substr(0, 16);
  fs::path entry = torch_cache_root(opt.cache_dir, row) / (row.torch.str() + "-" + row.cuda_tag + "-" + sha);
  // Check the wheel is the build the row needs before unpacking 4 GB of it.
  check_version_py(read_wheel_member(wheel, "torch/version.py"), wheel.string(), row);
  fs::create_directories(entry.parent_path());
  fill_once(entry, [&](const fs::path& tmp) {
    unpack_wheel(wheel, tmp,
                 {{"torch/include/", ""}, {"torch/lib/", ""}, {"torch/share/cmake/", ""}, {"torch/version.py", ""}});
  });
  TorchInstall t = read_torch_dir(entry / "torch");
  t.origin = "cache, from " + wheel.filename().string();
  return t;
}

fs::path provision_cuda(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& py,
                        const matrix::CudaVersion& cuda, const std::string& platform) {
  const std::string release = cuda.release_str();
  const std::vector<std::string> expected = cuda_home_files(platform);
  if (expected.empty())
    throw UsageError("sagebuild assembles a CUDA home from PyPI's wheels for linux_x86_64 and win_amd64, not " +
                     platform + ": install CUDA " + release + " and pass --cuda-home DIR");
  const std::vector<std::string> reqs = cuda_wheel_requirements(cuda);  // throws for a CUDA PyPI lacks
  fs::path entry = cuda_cache_entry(opt.cache_dir, cuda);
  fs::create_directories(entry.parent_path());
  fill_once(entry, [&](const fs::path& tmp) {
    fs::path dl = tmp / ".downloads";
    fs::create_directories(dl);
    matrix::Row row;
    row.platform = platform;
    Result r = pip_download(runner, py, row, dl, reqs, "3.12");
    if (!r.ok())
      throw UsageError("cannot download CUDA " + release + " for " + platform + " from PyPI (pip exit " +
                       std::to_string(r.exit_code) + "): " + r.err.substr(r.err.size() > 600 ? r.err.size() - 600 : 0) +
                       "\n  fix: install CUDA " + release + " and pass --cuda-home DIR");
    // CUDA 13 wheels put everything under nvidia/cu13/, on Linux and Windows:
    // merged, that is the toolkit's tree (bin/, nvvm/, include/, lib/).
    for (const auto& w : wheels_in(dl)) unpack_wheel(w, tmp, {{"nvidia/cu13/", "nvidia/cu13/"}});
    fs::remove_all(dl);
    if (platform == "linux_x86_64") {
      // nvcc.profile looks in $(TOP)/targets/<triple>/{include,lib}; wheels
      // cannot carry the symlinks a toolkit install has, so make them.
      fs::create_directories(tmp / "targets/x86_64-linux");
      if (!fs::exists(tmp / "lib") && fs::exists(tmp / "lib64")) fs::create_directory_symlink("lib64", tmp / "lib");
      fs::create_directory_symlink("../../include", tmp / "targets/x86_64-linux/include");
      fs::create_directory_symlink("../../lib", tmp / "targets/x86_64-linux/lib");
      if (!fs::exists(tmp / "lib64")) fs::create_directory_symlink("lib", tmp / "lib64");
      for (const auto& e : fs::directory_iterator(tmp / "lib")) {
        std::string n = e.path().filename().string();
        if (n.rfind("libcudart.so.", 0) == 0 && !fs::exists(tmp / "lib/libcudart.so"))
          fs::create_symlink(n, tmp / "lib/libcudart.so");
      }
    }
    // win_amd64 needs nothing more: nvcc.exe's nvcc.profile names the
    // wheels' own directories (include/, include/cccl, lib/x64, nvvm/).
    std::string missing;
    for (const auto& f : expected)
      if (!fs::exists(tmp / f)) missing += (missing.empty() ? "" : ", ") + f;
    if (!missing.empty())
      throw UsageError("the CUDA " + release + " wheels from PyPI (" + platform +
                       ") lack what nvcc and the link need: " + missing + "\n  fix: install CUDA " + release +
                       " and pass --cuda-home DIR");
  });
  return entry;
}

fs::path cuda_cache_entry(const fs::path& cache_dir, const matrix::CudaVersion& cuda) {
  return cache_dir / "cuda" / cuda.release_str();
}

fs::path headers_entry(const fs::path& cache_dir, const HeaderPackage& package) {
  return cache_dir / "headers" /
         (package.name + "-" + package.version + (package.platform.empty() ? "" : "-" + package.platform));
}

const std::vector<std::string>& known_cuda_libraries() {
  static const std::vector<std::string> libs = {"cublas", "cusolver", "cusparse"};
  return libs;
}

std::string header_provider(const std::string& header, const matrix::CudaVersion& cuda) {
  const std::string major = std::to_string(cuda.major);
  const std::string dashed = major + "-" + std::to_string(cuda.minor);
  std::string base = header.substr(header.rfind('/') + 1);
  // The CUDA libraries' own headers (a CUDA 13 wheel holds them all in nvidia/cu13/include/).
  static const std::vector<std::pair<std::string, std::string>> library_prefixes = {
      {"cublas", "cublas"}, {"cusparse", "cusparse"}, {"cusolver", "cusolver"}};
  for (const auto& [prefix, lib] : library_prefixes)
    if (base.rfind(prefix, 0) == 0 && header.find('/') == std::string::npos) {
      std::string wheel = "nvidia-" + lib + (cuda.major == 12 ? "-cu12" : "");
      return "provided by the " + wheel + " wheel (CUDA " + cuda.release_str() + "; `cuda_libraries: [" + lib +
             "]` in the tree's source manifest provisions its headers) / a full CUDA toolkit's lib" + lib + "-dev-" +
             dashed;
    }
  if (base == "Python.h") return "provided by the Python's headers (python3-dev; pass --python with one that has them)";
  if (header.rfind("cutlass/", 0) == 0 || header.rfind("cute/", 0) == 0)
    return "provided by the nvidia-cutlass wheel (`headers:` in the tree's source manifest)";
  for (const char* p : {"torch/", "ATen/", "c10/", "pybind11/", "caffe2/"})
    if (header.rfind(p, 0) == 0) return "provided by the row's torch wheel (torch/include/)";
  for (const char* p : {"cuda", "crt/", "cub/", "thrust/", "nv/", "vector_types.h", "driver_types.h", "library_types.h",
                        "nvtx3/", "curand", "cufft", "nvrtc", "cuComplex.h"})
    if (header.rfind(p, 0) == 0)
      return "provided by the CUDA " + cuda.release_str() + " toolkit (NVIDIA's CUDA " + major +
             " wheels on PyPI, or a full install's cuda-libraries-dev-" + dashed + ")";
  return "";
}

std::vector<HeaderPackage> cuda_library_headers(const matrix::CudaVersion& cuda,
                                                const std::vector<std::string>& libraries,
                                                const std::string& platform) {
  // What each CUDA release pins: the Requires-Dist of its extras in the
  // newest cuda-toolkit==X.Y.* on PyPI (its METADATA, read 2026-11-28; the
  // release whose nvcc provision_cuda's nvidia-cuda-nvcc==X.Y.* takes).
  // CUDA 12's wheels carry the headers in nvidia/<lib>/include/, CUDA 13's
  // all in nvidia/cu13/include/, on Linux and Windows alike.
  //   cuda-toolkit  cublas     cusolver    cusparse
  //   12.8.2.0      12.8.5.5   11.7.3.90   12.5.8.93
  //   12.9.2.0      12.9.2.10  11.7.5.82   12.5.10.65
  //   13.0.3.0      13.1.1.3   12.0.4.66   12.6.3.3
  //   13.2.2        13.4.1.3   12.2.0.11   12.7.10.12
  static const std::map<std::string, std::map<std::string, std::string>> pins = {
      {"12.8", {{"cublas", "12.8.5.5"}, {"cusolver", "11.7.3.90"}, {"cusparse", "12.5.8.93"}}},
      {"12.9", {{"cublas", "12.9.2.10"}, {"cusolver", "11.7.5.82"}, {"cusparse", "12.5.10.65"}}},
      {"13.0", {{"cublas", "13.1.1.3"}, {"cusolver", "12.0.4.66"}, {"cusparse", "12.6.3.3"}}},
      {"13.2", {{"cublas", "13.4.1.3"}, {"cusolver", "12.2.0.11"}, {"cusparse", "12.7.10.12"}}},
  };
  std::vector<HeaderPackage> out;
  if (libraries.empty()) return out;
  auto release = pins.find(cuda.release_str());
  if (release == pins.end()) {
    std::string known;
    for (const auto& [v, _] : pins) known += (known.empty() ? "" : ", ") + v;
    throw UsageError("CUDA " + cuda.release_str() + ": sagebuild knows the CUDA library wheels of CUDA " + known +
                     " only; add CUDA " + cuda.release_str() +
                     "'s pins to cuda_library_headers (tools/sagebuild/toolchain/"
                     "provision.cc) from the METADATA of cuda-toolkit==" +
                     cuda.release_str() + ".* on PyPI");
  }
  const std::string major = std::to_string(cuda.major);
  for (const auto& lib : libraries) {
    auto pin = release->second.find(lib);
    if (pin == release->second.end())
      throw UsageError("CUDA library '" + lib +
                       "' is not one sagebuild provisions headers for (known: cublas, "
                       "cusolver, cusparse)");
    HeaderPackage h;
    h.name = "nvidia-" + lib + (cuda.major == 12 ? "-cu12" : "");
    h.version = pin->second;
    h.include_dirs = {cuda.major == 12 ? "nvidia/" + lib + "/include" : "nvidia/cu" + major + "/include"};
    h.platform = platform;
    out.push_back(std::move(h));
  }
  return out;
}

fs::path provision_headers(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& py,
                           const HeaderPackage& package, const std::string& platform) {
  fs::path entry = headers_entry(opt.cache_dir, package);
  fs::create_directories(entry.parent_path());
  fill_once(entry, [&](const fs::path& tmp) {
    fs::path dl = tmp / ".downloads";
    fs::create_directories(dl);
    matrix::Row row;
    row.platform = package.platform.empty() ? platform : package.platform;
    Result r = pip_download(runner, py, row, dl, {package.requirement()}, "3.12");
    if (!r.ok())
      throw UsageError("cannot download " + package.requirement() + " for " + platform + " from PyPI (pip exit " +
                       std::to_string(r.exit_code) + "): " + r.err.substr(r.err.size() > 600 ? r.err.size() - 600 : 0) +
                       "\n  fix: make PyPI reachable, or fill " + entry.string() + " with the wheel's " +
                       (package.include_dirs.empty() ? std::string("headers") : package.include_dirs.front()));
    auto wheels = wheels_in(dl);
    if (wheels.size() != 1)
      throw UsageError("pip download " + package.requirement() + " left " + std::to_string(wheels.size()) +
                       " wheels in " + dl.string() + "; expected exactly one");
    // One cache entry serves every platform's rows only if the headers are
    // the same for all: a pure wheel's are.
    const std::string name = wheels.front().filename().string();
    auto parsed = wheel::parse_wheel_filename(name);
    if (package.platform.empty() &&
        (!parsed.filename || parsed.filename->platform_tags != std::vector<std::string>{"any"}))
      throw UsageError(name + " is not a pure wheel (platform tag `any`): sagebuild expected " + package.requirement() +
                       " to carry the same headers for every platform");
    for (const auto& dir : package.include_dirs)
      if (unpack_wheel(wheels.front(), tmp, {{dir + "/", ""}}) == 0)
        throw UsageError(name + " has no " + dir + "/: the source manifest names a directory this version of " +
                         package.name + " lacks");
    fs::remove_all(dl);
  });
  return entry;
}

ProvisionedHeaders provide_headers(ProcessRunner& runner, const ToolchainOptions& opt, const HeaderPackage& package,
                                   const matrix::Row& row, const std::function<PythonInfo()>& pip_python,
                                   Check& check) {
  ProvisionedHeaders out{package.requirement(), {}};
  fs::path entry = headers_entry(opt.cache_dir, package);
  const std::string what = package.name + " " + package.version + " headers";
  check = {true, what, entry.string() + " (cache)", ""};
  if (!fs::exists(entry)) {
    if (opt.provision) {
      provision_headers(runner, opt, pip_python(), package, row.platform);
      check.found = entry.string() + " (provisioned from PyPI)";
    } else if (opt.plan_only) {
      check.found = entry.string() + " (dry run: `build` downloads " + package.requirement() + " from PyPI)";
    } else {
      check = {false, what, "not in the cache " + entry.string(),
               "`sagebuild build` downloads " + package.requirement() + " from PyPI"};
    }
  }
  for (const auto& dir : package.include_dirs) out.include_dirs.push_back(entry / dir);
  return out;
}

}  // namespace sb::toolchain
