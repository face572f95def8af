#include "sagebuild/build/toolchain.h"

#include <algorithm>

#include "sagebuild/build/cache.h"
#include "sagebuild/build/remote_wheel.h"
#include "sagebuild/build/wheel_unpack.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"

namespace sb::build {

namespace fs = std::filesystem;

RowToolchain Toolchain::planner_view() const {
  RowToolchain t;
  t.nvcc = cuda.nvcc;
  t.nvcc_version = cuda.version.str();
  t.cuda_include = cuda.home / "include";
  t.cuda_lib = cuda.lib_dir();
  t.host_cxx = host_cxx;
  t.host_compiler = host.id + " " + host.version();
  t.torch_root = torch.root;
  t.torch_version = torch.version;
  t.cxx11_abi = torch.cxx11_abi;
  t.python_include = python.include_dir;
  t.python_version = python.version();
  t.ext_suffix = python.ext_suffix;
  return t;
}

std::vector<std::string> pip_platforms(const std::string& tag) {
  if (tag == "linux_x86_64")
    return {"manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
            "manylinux_2_12_x86_64", "manylinux2010_x86_64"};
  if (tag == "linux_aarch64")
    return {"manylinux_2_28_aarch64", "manylinux_2_27_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"};
  throw UsageError("provisioning from PyPI is implemented for linux_x86_64 and linux_aarch64 rows, not " + tag +
                   ": install CUDA and torch and pass --cuda-home and --python");
}

namespace {

std::string cuda_tag(const std::string& cuda) {
  std::string t = "cu";
  for (char c : cuda)
    if (c != '.') t += c;
  return t;
}

Result pip_download(ProcessRunner& runner, const PythonInfo& py, const sb::matrix::Row& row,
                    const fs::path& dest, const std::vector<std::string>& requirements,
                    const std::string& python_version) {
  std::vector<std::string> argv = {py.executable.string(), "-m", "pip", "download", "--no-deps",
                                   "--only-binary=:all:", "--python-version", python_version,
                                   "--dest", dest.string()};
  for (const auto& p : pip_platforms(row.platform)) {
    argv.push_back("--platform");
    argv.push_back(p);
  }
  argv.insert(argv.end(), requirements.begin(), requirements.end());
  Command c(argv);
  c.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
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

std::optional<fs::path> cached_torch(const fs::path& cache_dir, const sb::matrix::Row& row) {
  fs::path dir = cache_dir / "torch";
  if (!fs::exists(dir)) return std::nullopt;
  std::string prefix = row.torch + "-" + cuda_tag(row.cuda) + "-";
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find(".tmp") == std::string::npos && name.find(".lock") == std::string::npos &&
        fs::exists(e.path() / "torch/version.py"))
      return e.path() / "torch";
  }
  return std::nullopt;
}

namespace {

// The check every path shares: the wheel's own torch/version.py names the
// row's release and CUDA.  Returns the CUDA; throws UsageError.
std::string check_version_py(const std::string& vpy, const std::string& what, const sb::matrix::Row& row) {
  auto wver = parse_version_py(vpy, "__version__");
  auto wcuda = parse_version_py(vpy, "cuda");
  if (!wver || wver->substr(0, wver->find('+')) != row.torch)
    throw UsageError(what + " is torch " + wver.value_or("?") + ", the row needs torch " + row.torch);
  if (wcuda.value_or("") != row.cuda)
    throw UsageError(what + " is torch " + *wver + " built for CUDA " + wcuda.value_or("none") +
                     ", but row " + row.id + " needs CUDA " + row.cuda +
                     "; fix: use the torch build for CUDA " + row.cuda + " (PyTorch's index https://download.pytorch.org/whl/" +
                     cuda_tag(row.cuda) + ") via --torch-wheel");
  return *wcuda;
}

}  // namespace

std::optional<TorchInstall> stable_abi_torch(const fs::path& cache_dir, const std::optional<PythonInfo>& python,
                                             const std::string& cuda, const TorchMinor& min) {
  auto serves = [&](const std::string& version, const std::string& its_cuda) {
    auto v = parse_torch_minor(version);
    return v && !(*v < min) && its_cuda == cuda;
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

std::string remote_torch_version_py(ProcessRunner& runner, const ToolchainOptions& opt, const sb::matrix::Row& row) {
  fs::path scratch = opt.cache_dir / "tmp" / ("probe-" + row.torch + "-" + cuda_tag(row.cuda));
  std::string page = default_index_url() + "/torch/";
  auto files = parse_simple_index_json(http_get(runner, page, "application/vnd.pypi.simple.v1+json", scratch), page);
  std::vector<std::string> tags;  // newest Python first, as provision_torch downloads
  for (auto it = row.pythons.rbegin(); it != row.pythons.rend(); ++it) {
    std::string t = "cp";
    for (char ch : *it)
      if (ch != '.') t += ch;
    tags.push_back(t);
  }
  auto wheel = pick_wheel(files, "torch", row.torch, tags, pip_platforms(row.platform));
  if (!wheel) throw IoError(page + " lists no torch " + row.torch + " wheel for " + row.platform);
  if (wheel->size == 0) throw RangeNotSupported(page + " does not give the size of " + wheel->filename);
  RangeSource src(wheel->size, http_range_fetch(runner, wheel->url, scratch));
  std::string vpy = read_zip_member(src, "torch/version.py");
  std::error_code ec;
  fs::remove_all(scratch, ec);
  check_version_py(vpy, wheel->url, row);
  return vpy;
}

TorchInstall provision_torch(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& py,
                             const sb::matrix::Row& row) {
  fs::path wheel;
  // A local wheel the user pointed at, when it is this release.
  for (const auto& w : opt.torch_wheels) {
    std::string name = w.filename().string();
    if (name.rfind("torch-" + row.torch + "-", 0) == 0 || name.rfind("torch-" + row.torch + "+", 0) == 0) {
      wheel = w;
      break;
    }
  }
  fs::path downloads = opt.cache_dir / "downloads" / ("torch-" + row.torch);
  if (wheel.empty()) {
    fs::create_directories(downloads);
    FileLock lock(downloads.string() + ".lock");
    auto have = wheels_in(downloads);
    if (have.empty()) {
      // The headers and libraries are the same for every CPython tag: take
      // the newest Python the row serves.
      std::string pyver = row.pythons.empty() ? row.build_python : row.pythons.back();
      Result r = pip_download(runner, py, row, downloads, {"torch==" + row.torch}, pyver);
      if (!r.ok())
        throw UsageError("cannot download torch " + row.torch + " for " + row.platform + " (pip exit " +
                         std::to_string(r.exit_code) + "): " + r.err.substr(r.err.size() > 600 ? r.err.size() - 600 : 0) +
                         "\n  fix: pass --python with a Python that has torch " + row.torch +
                         ", or --torch-wheel FILE with the wheel");
      have = wheels_in(downloads);
    }
    if (have.empty()) throw UsageError("pip reported success but left no torch wheel in " + downloads.string());
    wheel = have.front();
  }
  std::string sha = hex(sha256_file(wheel)).substr(0, 16);
  fs::path entry = opt.cache_dir / "torch" / (row.torch + "-" + cuda_tag(row.cuda) + "-" + sha);
  // Check the wheel is the build the row needs before unpacking 4 GB of it.
  check_version_py(read_wheel_member(wheel, "torch/version.py"), wheel.string(), row);
  fs::create_directories(entry.parent_path());
  fill_once(entry, [&](const fs::path& tmp) {
    unpack_wheel(wheel, tmp, {{"torch/include/", ""}, {"torch/lib/", ""}, {"torch/share/cmake/", ""},
                              {"torch/version.py", ""}});
  });
  TorchInstall t = read_torch_dir(entry / "torch");
  t.origin = "cache, from " + wheel.filename().string();
  return t;
}

fs::path provision_cuda(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& py,
                        const std::string& cuda) {
  fs::path entry = opt.cache_dir / "cuda" / cuda;
  fs::create_directories(entry.parent_path());
  fill_once(entry, [&](const fs::path& tmp) {
    fs::path dl = tmp / ".downloads";
    fs::create_directories(dl);
    std::vector<std::string> reqs;
    for (const auto& n : cuda_wheel_names(cuda)) reqs.push_back(n + "==" + cuda + ".*");
    sb::matrix::Row linux_row;
    linux_row.platform = "linux_x86_64";
    Result r = pip_download(runner, py, linux_row, dl, reqs, "3.12");
    if (!r.ok())
      throw UsageError("cannot download CUDA " + cuda + " from PyPI (pip exit " + std::to_string(r.exit_code) +
                       "): " + r.err.substr(r.err.size() > 600 ? r.err.size() - 600 : 0) +
                       "\n  fix: install CUDA " + cuda + " and pass --cuda-home DIR");
    std::string major = cuda.substr(0, cuda.find('.'));
    for (const auto& w : wheels_in(dl)) {
      // CUDA 13 wheels put everything under nvidia/cu13/; CUDA 12 ones under
      // nvidia/<component>/ (cuda_nvcc, cuda_runtime, ...): merge them all.
      if (major == "13") {
        unpack_wheel(w, tmp, {{"nvidia/cu13/", "nvidia/cu13/"}});
      } else {
        for (const char* comp : {"cuda_nvcc", "cuda_runtime", "cuda_cccl", "nvvm"})
          unpack_wheel(w, tmp, {{std::string("nvidia/") + comp + "/", std::string("nvidia/") + comp + "/"}});
      }
    }
    fs::remove_all(dl);
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
    if (!fs::exists(tmp / "bin/nvcc"))
      throw UsageError("the CUDA " + cuda + " wheels from PyPI did not contain bin/nvcc");
  });
  return entry;
}

// ---------------------------------------------------------------------------

struct ToolchainResolver::Partial {
  std::optional<CudaToolkit> cuda;
  std::optional<TorchInstall> torch;
  std::optional<CompilerId> host;
  fs::path host_cxx;
  std::optional<PythonInfo> python, torch_python, pip_python;
  std::string row_torch_cuda, row_torch_check;
  std::vector<Check> checks;
  std::vector<std::string> problems;
};

ToolchainResolver::ToolchainResolver(ProcessRunner& runner, ToolchainOptions options)
    : runner_(runner), opt_(std::move(options)) {}

std::optional<PythonInfo> ToolchainResolver::python_named(const std::string& exe) {
  auto it = pythons_.find(exe);
  if (it != pythons_.end()) return it->second;
  std::optional<PythonInfo> info;
  if (auto p = find_program(exe, opt_.path_env)) {
    try {
      info = query_python_cached(runner_, *p, opt_.cache_dir);
    } catch (const UsageError&) {
    }
  }
  pythons_[exe] = info;
  return info;
}

ToolchainResolver::Partial ToolchainResolver::discover(const sb::matrix::Row& row, bool provision,
                                                      const StableAbiBinding* stable) {
  Partial p;
  auto fail = [&](Check c) {
    p.problems.push_back(c.what + ": " + c.found + "\n    fix: " + c.fix);
    p.checks.push_back(std::move(c));
  };

  // Python: the one given, else python3.  It answers for headers, torch and pip.
  std::string py_exe = opt_.python ? opt_.python->string() : "python3";
  p.pip_python = python_named(py_exe);
  bool abi3 = row.abi_mode == sb::matrix::AbiMode::abi3;
  if (!p.pip_python) {
    fail({false, "Python", py_exe + " not found or not answering", "pass --python PATH (CPython >= 3.9 with headers)"});
  } else if (abi3) {
    const auto& py = *p.pip_python;
    if (py.major == 3 && py.minor >= 9 && py.has_headers) {
      p.python = py;
      p.checks.push_back({true, "Python headers (abi3)", py.executable.string() + " " + py.version() + " " + py.include_dir.string(), ""});
    } else {
      fail({false, "Python headers (abi3)", py.executable.string() + " " + py.version() + (py.has_headers ? "" : " without Python.h"),
            "install the python3-dev package, or pass --python with a CPython >= 3.9 that has its headers"});
    }
  } else {
    std::optional<PythonInfo> own = p.pip_python->version() == row.build_python ? p.pip_python
                                                                                : python_named("python" + row.build_python);
    if (own && own->has_headers) {
      p.python = own;
      p.checks.push_back({true, "Python " + row.build_python + " headers", own->executable.string() + " " + own->include_dir.string(), ""});
    } else {
      fail({false, "Python " + row.build_python + " headers", own ? "no Python.h" : "python" + row.build_python + " not found",
            "install Python " + row.build_python + " with its headers and pass --python PATH"});
    }
  }

  // CUDA.
  CudaSearch search{opt_.cuda_home, opt_.cuda_home_env, opt_.path_env};
  CudaFound found = find_cuda(runner_, search, row.cuda);
  if (found.toolkit) {
    p.cuda = found.toolkit;
    p.checks.push_back({true, "CUDA " + row.cuda, p.cuda->nvcc.string() + " " + p.cuda->version.str() + " (" + p.cuda->origin + ")", ""});
  } else if (!opt_.cuda_home && fs::exists(opt_.cache_dir / "cuda" / row.cuda / "bin/nvcc")) {
    fs::path nvcc = opt_.cache_dir / "cuda" / row.cuda / "bin/nvcc";
    auto v = query_nvcc(runner_, nvcc);
    p.cuda = CudaToolkit{nvcc.parent_path().parent_path(), nvcc, v, "cache (PyPI wheels)"};
    p.checks.push_back({v.short_str() == row.cuda, "CUDA " + row.cuda, nvcc.string() + " " + v.str() + " (cache)", ""});
  } else {
    std::string tried;
    for (const auto& c : found.candidates) tried += (tried.empty() ? "" : "; ") + c.origin + ": " + c.problem;
    if (tried.empty()) tried = "no nvcc in --cuda-home, CUDA_HOME or PATH";
    const std::string blocker = cuda_provision_blocker(row.cuda);
    if (!opt_.cuda_home && !blocker.empty()) {  // dry run or not: this row needs a local CUDA
      fail({false, "CUDA " + row.cuda, tried + "; " + blocker,
            "install the CUDA " + row.cuda + " toolkit and pass --cuda-home (or set CUDA_HOME)"});
    } else if (provision && !opt_.cuda_home && p.pip_python) {
      fs::path home = provision_cuda(runner_, opt_, *p.pip_python, row.cuda);
      auto v = query_nvcc(runner_, home / "bin/nvcc");
      if (v.short_str() != row.cuda)
        fail({false, "CUDA " + row.cuda, "provisioned nvcc reports " + v.str(), "pass --cuda-home with CUDA " + row.cuda});
      else {
        p.cuda = CudaToolkit{home, home / "bin/nvcc", v, "cache (PyPI wheels)"};
        p.checks.push_back({true, "CUDA " + row.cuda, p.cuda->nvcc.string() + " " + v.str() + " (provisioned)", ""});
      }
    } else if (opt_.plan_only && !opt_.cuda_home) {
      fs::path home = opt_.cache_dir / "cuda" / row.cuda;
      auto v = parse_nvcc_version("release " + row.cuda + ", V" + row.cuda + ".0");
      p.cuda = CudaToolkit{home, home / "bin/nvcc", v.value_or(NvccVersion{}), "to be provisioned from PyPI"};
      p.checks.push_back({true, "CUDA " + row.cuda, p.cuda->nvcc.string() + " (dry run: " + tried +
                                                        "; `build` provisions it from NVIDIA's PyPI wheels)", ""});
    } else {
      fail({false, "CUDA " + row.cuda, tried,
            opt_.cuda_home ? "point --cuda-home at a CUDA " + row.cuda + " toolkit"
                           : "install CUDA " + row.cuda + " and pass --cuda-home, or let `sagebuild build` provision it from PyPI into " +
                                 (opt_.cache_dir / "cuda" / row.cuda).string()});
    }
  }

  // torch: from the Python if it has this exact release, else the cache, else PyPI.
  auto torch_ok = [&](const TorchInstall& t) {
    if (t.public_version() != row.torch) {
      fail({false, "torch " + row.torch, t.root.string() + " is torch " + t.version, "use torch " + row.torch});
      return false;
    }
    if (t.cuda != row.cuda) {
      fail({false, "torch " + row.torch + " for CUDA " + row.cuda,
            t.root.string() + " is torch " + t.version + " built for CUDA " + (t.cuda.empty() ? "none (CPU)" : t.cuda),
            "use the torch " + row.torch + " build for CUDA " + row.cuda + " (--torch-wheel FILE or --python)"});
      return false;
    }
    return true;
  };
  // The Python's torch serves only when it is this release built for this
  // CUDA; another build of the same release (cu130 for a cu126 row) is not
  // an error here: the row's own build comes from the cache or PyPI, and the
  // error names it only when nothing else serves.
  const std::optional<PythonTorch>& py_torch = p.pip_python ? p.pip_python->torch : std::nullopt;
  bool same_release = py_torch && py_torch->version.substr(0, py_torch->version.find('+')) == row.torch;
  std::string other_build;
  if (same_release && py_torch->cuda != row.cuda)
    other_build = "; " + py_exe + " has torch " + py_torch->version + " built for CUDA " +
                  (py_torch->cuda.empty() ? "none (CPU)" : py_torch->cuda) + ", the row needs CUDA " + row.cuda;
  try {
    std::optional<TorchInstall> stable_torch;
    bool row_torch_local = (same_release && py_torch->cuda == row.cuda) || cached_torch(opt_.cache_dir, row);
    if (stable && !row_torch_local)
      stable_torch = stable_abi_torch(opt_.cache_dir, p.pip_python, row.cuda, stable->min_torch);
    if (stable_torch) {
      // The stable-ABI binding compiles against a torch already here; the
      // row's own wheel is only checked, from the index, never downloaded.
      p.torch = stable_torch;
      if (!provision) {  // dry run: no network; `build` reads it
        p.row_torch_cuda = row.cuda;
        p.row_torch_check = "dry run: `build` reads torch/version.py of the index's torch " + row.torch +
                            " wheel with HTTP ranges";
      } else {
        try {
          std::string vpy = remote_torch_version_py(runner_, opt_, row);
          p.row_torch_cuda = parse_version_py(vpy, "cuda").value_or("");
          p.row_torch_check = "torch/version.py of the index's wheel (HTTP ranges): torch " +
                              parse_version_py(vpy, "__version__").value_or("?") + ", CUDA " + p.row_torch_cuda;
        } catch (const IoError& e) {
          // No ranges, no network, an index without sizes or without the
          // wheel: pip's full download checks the same file (and gives the
          // headers of the row's own release).  A wrong CUDA is a UsageError
          // and fails the row instead.
          p.torch = provision_torch(runner_, opt_, *p.pip_python, row);
          if (torch_ok(*p.torch)) p.row_torch_check = "torch/version.py of the downloaded wheel (" + std::string(e.what()) + ")";
          else p.torch.reset();
        }
      }
    } else if (same_release && py_torch->cuda == row.cuda) {
      TorchInstall t = read_torch_dir(p.pip_python->torch->dir);
      t.origin = "python " + p.pip_python->executable.string();
      if (torch_ok(t)) {
        p.torch = t;
        p.torch_python = p.pip_python;
      }
    } else if (auto dir = cached_torch(opt_.cache_dir, row)) {
      TorchInstall t = read_torch_dir(*dir);
      t.origin = "cache";
      if (torch_ok(t)) p.torch = t;
    } else if (provision && p.pip_python) {
      TorchInstall t = provision_torch(runner_, opt_, *p.pip_python, row);
      if (torch_ok(t)) p.torch = t;
    } else if (opt_.plan_only) {
      TorchInstall t;
      t.root = opt_.cache_dir / "torch" / (row.torch + "-" + row.cuda_tag + "-<wheel sha>") / "torch";
      t.version = row.torch;
      t.cuda = row.cuda;
      t.abi_source = "dry run: read from the torch build once downloaded";
      t.origin = "to be provisioned: pip download --no-deps torch==" + row.torch;
      p.torch = t;
    } else {
      fail({false, "torch " + row.torch + " (CUDA " + row.cuda + ")",
            "not importable from " + py_exe + " and not in the cache" + other_build,
            "`sagebuild build` downloads it (pip download torch==" + row.torch + "); or pass --python with a Python "
            "that has it, or --torch-wheel FILE"});
    }
  } catch (const UsageError& e) {
    fail({false, "torch " + row.torch, e.what(), "see above"});
  } catch (const IoError& e) {
    fail({false, "torch " + row.torch, e.what(), "check the cache directory " + opt_.cache_dir.string()});
  }
  if (p.torch && p.row_torch_cuda.empty()) {
    p.row_torch_cuda = p.torch->cuda;
    if (p.row_torch_check.empty()) p.row_torch_check = "torch/version.py of " + p.torch->root.string();
  }
  if (p.torch && p.torch->public_version() != row.torch)
    p.checks.push_back({true, "torch " + row.torch + " for CUDA " + row.cuda, p.row_torch_check, ""});
  if (p.torch)
    p.checks.push_back({true, std::string(p.torch->public_version() != row.torch ? "stable-ABI headers: " : "") +
                                  "torch " + p.torch->public_version() + " for CUDA " + row.cuda,
                        p.torch->root.string() + " " + p.torch->version + ", cxx11 abi " + (p.torch->cxx11_abi ? "1" : "0") +
                            " (" + p.torch->abi_source + "; " + p.torch->origin + ")", ""});

  // Host compiler.
  std::vector<std::string> names;
  if (opt_.host_compiler) names.push_back(opt_.host_compiler->string());
  else names = {"c++", "g++", "clang++"};
  for (const auto& n : names) {
    auto path = find_program(n, opt_.path_env);
    if (!path) continue;
    Result r = runner_.run(Command{{path->string(), "--version"}});
    auto id = r.ok() ? parse_compiler_version(r.out) : std::nullopt;
    if (!id) continue;
    p.host = id;
    p.host_cxx = *path;
    break;
  }
  if (!p.host) {
    fail({false, "host compiler", opt_.host_compiler ? opt_.host_compiler->string() + " is not a working gcc or clang"
                                                      : "no c++, g++ or clang++ on PATH",
          "install g++ and/or pass --host-compiler PATH"});
  } else {
    std::optional<SupportedRange> range = supported_range(row.cuda, p.host->id);
    if (!range && p.cuda) {
      fs::path hc = p.cuda->home / "include/crt/host_config.h";
      if (fs::exists(hc))
        if (auto mx = max_major_from_host_config(read_file(hc), p.host->id))
          range = SupportedRange{0, *mx, hc.string()};
    }
    std::string what = "host compiler for CUDA " + row.cuda;
    std::string found_s = p.host_cxx.string() + " (" + p.host->id + " " + p.host->version() + ")";
    if (!range) {
      p.checks.push_back({true, what, found_s + "; no known range for CUDA " + row.cuda + ", nvcc will check", ""});
    } else if (auto msg = check_range(*p.host, *range, row.cuda); !msg.empty()) {
      fail({false, what, found_s, msg});
    } else {
      p.checks.push_back({true, what, found_s + ", supported " + std::to_string(range->min_major) + "-" +
                                          std::to_string(range->max_major), ""});
    }
  }
  return p;
}

Toolchain ToolchainResolver::resolve(const sb::matrix::Row& row, const StableAbiBinding* stable) {
  Partial p = discover(row, opt_.provision, stable);
  if (!p.problems.empty()) {
    std::string msg = "row " + row.id + ": the toolchain is incomplete:";
    for (const auto& s : p.problems) msg += "\n  " + s;
    throw UsageError(msg);
  }
  Toolchain t{*p.cuda, *p.torch, p.row_torch_cuda, p.row_torch_check, p.host_cxx, *p.host, *p.python, p.torch_python, p.checks};
  return t;
}

std::vector<Check> ToolchainResolver::diagnose(const sb::matrix::Row& row) {
  try {
    return discover(row, false, nullptr).checks;
  } catch (const std::exception& e) {
    return {Check{false, "toolchain", e.what(), "see the message"}};
  }
}

}  // namespace sb::build
