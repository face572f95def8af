#include "sagebuild/toolchain/gnu_resolver.h"

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/toolchain/gnu_toolchain.h"
#include "sagebuild/toolchain/provision.h"

namespace sb::toolchain {

namespace fs = std::filesystem;
using run::Command;
using run::Result;

void GnuResolver::Found::fail(Check c) {
  problems.push_back(c.what + ": " + c.found + "\n    fix: " + c.fix);
  checks.push_back(std::move(c));
}

GnuResolver::GnuResolver(ProcessRunner& runner, ToolchainOptions options) : runner_(runner), opt_(std::move(options)) {}

std::optional<PythonInfo> GnuResolver::python_named(const std::string& exe) {
  auto it = pythons_.find(exe);
  if (it != pythons_.end()) return it->second;
  std::optional<PythonInfo> info;
  if (auto p = run::find_program(exe, opt_.path_env)) {
    try {
      info = query_python_cached(runner_, *p, opt_.cache_dir);
    } catch (const UsageError&) {
    }
  }
  pythons_[exe] = info;
  return info;
}

// Python: the one given, else python3.  It answers for headers, torch and pip;
// a per-interpreter row needs the headers of its own Python.
void GnuResolver::find_python(const matrix::Row& row, Found& f) {
  std::string exe = opt_.python ? opt_.python->string() : "python3";
  f.pip_python = python_named(exe);
  if (!f.pip_python) {
    f.fail({false, "Python", exe + " not found or not answering", "pass --python PATH (CPython >= 3.9 with headers)"});
    return;
  }
  if (row.abi_mode == wheel::AbiMode::abi3) {
    const auto& py = *f.pip_python;
    if (py.major == 3 && py.minor >= 9 && py.has_headers) {
      f.python = py;
      f.checks.push_back({true, "Python headers (abi3)",
                          py.executable.string() + " " + py.version() + " " + py.include_dir.string(), ""});
    } else {
      f.fail({false, "Python headers (abi3)",
              py.executable.string() + " " + py.version() + (py.has_headers ? "" : " without Python.h"),
              "install the python3-dev package, or pass --python with a CPython >= 3.9 that has its headers"});
    }
    return;
  }
  std::optional<PythonInfo> own =
      f.pip_python->release() == row.build_python ? f.pip_python : python_named("python" + row.build_python.str());
  if (own && own->has_headers) {
    f.python = own;
    f.checks.push_back({true, "Python " + row.build_python.str() + " headers",
                        own->executable.string() + " " + own->include_dir.string(), ""});
  } else {
    f.fail({false, "Python " + row.build_python.str() + " headers",
            own ? "no Python.h" : "python" + row.build_python.str() + " not found",
            "install Python " + row.build_python.str() + " with its headers and pass --python PATH"});
  }
}

// CUDA: nvcc of the row's version from --cuda-home, CUDA_HOME or PATH, else
// the cache's, else provisioned (or, in a dry run, planned) from PyPI.
void GnuResolver::find_cuda(const matrix::Row& row, bool provision, Found& f) {
  CudaFound found =
      toolchain::find_cuda(runner_, CudaSearch{opt_.cuda_home, opt_.cuda_home_env, opt_.path_env}, row.cuda);
  fs::path cached = cuda_cache_entry(opt_.cache_dir, row.cuda) / "bin/nvcc";
  if (found.toolkit) {
    f.cuda = found.toolkit;
    f.checks.push_back({true, "CUDA " + row.cuda.release_str(),
                        f.cuda->nvcc.string() + " " + f.cuda->version.full_str() + " (" + f.cuda->origin + ")", ""});
  } else if (!opt_.cuda_home && fs::exists(cached)) {
    auto v = query_nvcc(runner_, cached);
    f.cuda = CudaToolkit{cached.parent_path().parent_path(), cached, v, "cache (PyPI wheels)"};
    f.checks.push_back({v.release() == row.cuda, "CUDA " + row.cuda.release_str(),
                        cached.string() + " " + v.full_str() + " (cache)", ""});
  } else {
    std::string tried;
    for (const auto& c : found.candidates) tried += (tried.empty() ? "" : "; ") + c.origin + ": " + c.problem;
    provision_or_plan_cuda(row, provision, tried.empty() ? "no nvcc in --cuda-home, CUDA_HOME or PATH" : tried, f);
  }
}

void GnuResolver::provision_or_plan_cuda(const matrix::Row& row, bool provision, const std::string& tried, Found& f) {
  const std::string what = "CUDA " + row.cuda.release_str();
  const std::string blocker = cuda_provision_blocker(row.cuda);
  if (opt_.plan_only && (opt_.cuda_home || !blocker.empty())) {
    plan_missing_cuda(row, opt_.cuda_home || blocker.empty() ? tried : tried + "; " + blocker, f);
  } else if (!opt_.cuda_home && !blocker.empty()) {  // dry run or not: this row needs a local CUDA
    f.fail({false, what, tried + "; " + blocker,
            "install the CUDA " + row.cuda.release_str() + " toolkit and pass --cuda-home (or set CUDA_HOME)"});
  } else if (provision && !opt_.cuda_home && f.pip_python) {
    fs::path home = provision_cuda(runner_, opt_, *f.pip_python, row.cuda, row.platform);
    auto v = query_nvcc(runner_, home / "bin/nvcc");
    if (v.release() != row.cuda) {
      f.fail({false, what, "provisioned nvcc reports " + v.full_str(),
              "pass --cuda-home with CUDA " + row.cuda.release_str()});
      return;
    }
    f.cuda = CudaToolkit{home, home / "bin/nvcc", v, "cache (PyPI wheels)"};
    f.checks.push_back({true, what, f.cuda->nvcc.string() + " " + v.full_str() + " (provisioned)", ""});
  } else if (opt_.plan_only && !opt_.cuda_home) {
    fs::path home = cuda_cache_entry(opt_.cache_dir, row.cuda);
    f.cuda = CudaToolkit{home, home / "bin/nvcc", row.cuda, "to be provisioned from PyPI"};
    f.checks.push_back(
        {true, what,
         f.cuda->nvcc.string() + " (dry run: " + tried + "; `build` provisions it from NVIDIA's PyPI wheels)", ""});
  } else {
    f.fail({false, what, tried,
            opt_.cuda_home ? "point --cuda-home at a CUDA " + row.cuda.release_str() + " toolkit"
                           : "install CUDA " + row.cuda.release_str() +
                                 " and pass --cuda-home, or let `sagebuild build` provision "
                                 "it from PyPI into " +
                                 cuda_cache_entry(opt_.cache_dir, row.cuda).string()});
  }
}

// A dry run without the toolkit a build needs here (one --cuda-home names,
// or a CUDA PyPI has no nvcc for): the plan prints with the toolkit where
// --cuda-home says, else a labelled placeholder, and the check says what is
// missing and how to get it.
void GnuResolver::plan_missing_cuda(const matrix::Row& row, const std::string& why, Found& f) {
  fs::path home = opt_.cuda_home ? *opt_.cuda_home : fs::path("<CUDA_HOME of CUDA " + row.cuda.release_str() + ">");
  f.cuda = CudaToolkit{home, home / "bin/nvcc", row.cuda, "missing here"};
  f.checks.push_back(
      {false, "CUDA " + row.cuda.release_str(), why,
       "a real build needs it: install the CUDA " + row.cuda.release_str() + " toolkit" +
           (opt_.cuda_home ? " into " + opt_.cuda_home->string() : " and pass --cuda-home DIR (or set CUDA_HOME)")});
}

// The torch the binding compiles against: the Python's when it is this
// release built for this CUDA, else the cache's, else PyPI's wheel (a dry
// run plans it).  Another build of the same release in the Python (cu130 for
// a cu126 row) is not an error: it is named only when nothing else serves.
// A stable-ABI row takes any torch >= its minimum already here instead.
void GnuResolver::find_torch(const matrix::Row& row, bool provision,
                             const std::optional<matrix::TorchVersion>& stable_min_torch, Found& f) {
  const std::optional<PythonTorch> py_torch = f.pip_python ? f.pip_python->torch : std::nullopt;
  bool same_release = py_torch && py_torch->release() == row.torch;
  bool python_has_it = same_release && py_torch->cuda == row.cuda.release_str();
  auto cached = cached_torch(opt_.cache_dir, row);
  std::optional<TorchInstall> stable;
  if (stable_min_torch && !python_has_it && !cached)
    stable = stable_abi_torch(opt_.cache_dir, f.pip_python, row.cuda, *stable_min_torch);
  if (stable) {
    use_stable_abi_torch(row, provision, *stable, f);
  } else if (python_has_it) {
    TorchInstall t = read_torch_dir(py_torch->dir);
    t.origin = "python " + f.pip_python->executable.string();
    f.torch_python = f.pip_python;
    use_torch(row, t, f);
  } else if (cached) {
    TorchInstall t = read_torch_dir(*cached);
    t.origin = "cache";
    use_torch(row, t, f);
  } else if (provision && f.pip_python) {
    use_torch(row, provision_torch(runner_, opt_, *f.pip_python, row), f);
  } else if (opt_.plan_only) {
    TorchInstall t;
    t.root = opt_.cache_dir / "torch" / (row.torch.str() + "-" + row.cuda_tag + "-<wheel sha>") / "torch";
    t.version = row.torch.str();
    t.cuda = row.cuda.release_str();
    t.abi_source = "dry run: read from the torch build once downloaded";
    t.origin = "to be provisioned: pip download --no-deps torch==" + row.torch.str() + " --index-url " +
               torch_index_for(opt_, row);
    use_torch(row, t, f);
  } else {
    std::string other;
    if (same_release)
      other = "; the Python has torch " + py_torch->version + " built for CUDA " +
              (py_torch->cuda.empty() ? "none (CPU)" : py_torch->cuda) + ", the row needs CUDA " +
              row.cuda.release_str();
    f.fail({false, "torch " + row.torch.str() + " (CUDA " + row.cuda.release_str() + ")",
            "not importable from the Python and not in the cache" + other,
            "`sagebuild build` downloads it (pip download torch==" + row.torch.str() +
                "); or pass --python with a Python "
                "that has it, or --torch-wheel FILE"});
  }
}

// The stable-ABI binding compiles against a torch already here; the row's own
// wheel is only checked, from the index, never downloaded.
void GnuResolver::use_stable_abi_torch(const matrix::Row& row, bool provision, TorchInstall headers, Found& f) {
  f.torch = headers;
  if (!provision) {  // dry run: no network; `build` reads it
    f.row_torch_cuda = row.cuda.release_str();
    f.row_torch_check = "dry run: `build` reads torch/version.py of the torch " + row.torch.str() + " wheel on " +
                        torch_index_for(opt_, row) + " with HTTP ranges";
    return;
  }
  try {
    std::string vpy = remote_torch_version_py(runner_, opt_, row);
    f.row_torch_cuda = parse_version_py(vpy, "cuda").value_or("");
    f.row_torch_check = "torch/version.py of the index's wheel (HTTP ranges): torch " +
                        parse_version_py(vpy, "__version__").value_or("?") + ", CUDA " + f.row_torch_cuda;
  } catch (const IoError& e) {
    // No ranges, no network, an index without sizes or without the wheel:
    // pip's full download checks the same file (and gives the headers of
    // the row's own release).  A wrong CUDA is a UsageError: the row fails.
    f.torch.reset();
    use_torch(row, provision_torch(runner_, opt_, *f.pip_python, row), f);
    if (f.torch) f.row_torch_check = "torch/version.py of the downloaded wheel (" + std::string(e.what()) + ")";
  }
}

// The row's own release, checked to be its CUDA build.
void GnuResolver::use_torch(const matrix::Row& row, TorchInstall t, Found& f) {
  if (t.release() != row.torch) {
    f.fail({false, "torch " + row.torch.str(), t.root.string() + " is torch " + t.version,
            "use torch " + row.torch.str()});
  } else if (t.cuda != row.cuda.release_str()) {
    f.fail({false, "torch " + row.torch.str() + " for CUDA " + row.cuda.release_str(),
            t.root.string() + " is torch " + t.version + " built for CUDA " + (t.cuda.empty() ? "none (CPU)" : t.cuda),
            "use the torch " + row.torch.str() + " build for CUDA " + row.cuda.release_str() +
                " (--torch-wheel FILE or --python)"});
  } else {
    f.torch = std::move(t);
  }
}

namespace {

struct HostCandidate {
  fs::path path;
  CompilerId id;
};

std::optional<HostCandidate> query_compiler(ProcessRunner& runner, const fs::path& path) {
  Result r = runner.run(Command{{path.string(), "--version"}});
  if (auto id = r.ok() ? parse_compiler_version(r.out) : std::nullopt) return HostCandidate{path, *id};
  return std::nullopt;
}

// The versioned GCCs a machine may have besides its default one, newest
// first: g++-N on PATH (Debian, Ubuntu) and Red Hat's gcc-toolset-N
// (manylinux_2_28, AlmaLinux, RHEL).
std::vector<fs::path> versioned_gccs(const std::string& path_env, const fs::path& toolset_root) {
  std::vector<fs::path> out;
  for (int n = 20; n >= 5; --n) {
    if (auto p = run::find_program("g++-" + std::to_string(n), path_env)) out.push_back(*p);
    fs::path toolset = toolset_root / ("gcc-toolset-" + std::to_string(n)) / "root/usr/bin/g++";
    if (!toolset_root.empty() && fs::exists(toolset)) out.push_back(toolset);
  }
  return out;
}

// "gcc up to 13", "clang 3 to 18".
std::string range_text(const std::string& id, const SupportedRange& r) {
  return id + (r.min_major > 0 ? " " + std::to_string(r.min_major) + " to " : " up to ") + std::to_string(r.max_major);
}

}  // namespace

// The host compiler: --host-compiler, else the first of c++, g++, clang++ on
// PATH when the row's CUDA accepts it, else the newest versioned GCC it
// accepts (g++-N on PATH, gcc-toolset-N), else a failure naming what to
// install.
void GnuResolver::find_host_compiler(const matrix::Row& row, Found& f) {
  std::optional<HostCandidate> first;
  if (opt_.host_compiler) {
    if (auto path = run::find_program(opt_.host_compiler->string(), opt_.path_env))
      first = query_compiler(runner_, *path);
  } else {
    for (const char* n : {"c++", "g++", "clang++"}) {
      auto path = run::find_program(n, opt_.path_env);
      if (path && (first = query_compiler(runner_, *path))) break;
    }
  }
  // The range the row's CUDA accepts for a compiler kind: the table, else
  // what the toolkit's own crt/host_config.h enforces.
  auto range_for = [&](const std::string& id) {
    std::optional<SupportedRange> range = supported_range(row.cuda, id);
    fs::path host_config = f.cuda ? f.cuda->home / "include/crt/host_config.h" : fs::path();
    if (!range && f.cuda && fs::exists(host_config))
      if (auto max = max_major_from_host_config(read_file(host_config), id))
        range = SupportedRange{0, *max, host_config.string()};
    return range;
  };
  const std::string what = "host compiler for CUDA " + row.cuda.release_str();
  std::optional<SupportedRange> gcc_range = range_for("gcc");
  auto accepted = [&](const HostCandidate& c) {
    auto r = range_for(c.id.id);
    return !r || check_range(c.id, *r, row.cuda).empty();
  };
  std::string refused;  // the default compiler, when the row's CUDA refuses it
  if (!opt_.host_compiler && gcc_range && (!first || !accepted(*first))) {
    if (first) refused = first->path.string() + " is " + first->id.id + " " + first->id.version() + ", ";
    std::optional<HostCandidate> best;
    for (const auto& p : versioned_gccs(opt_.path_env, opt_.gcc_toolset_root)) {
      auto c = query_compiler(runner_, p);
      if (c && c->id.id == "gcc" && check_range(c->id, *gcc_range, row.cuda).empty() &&
          (!best || c->id.major > best->id.major))
        best = c;
    }
    if (best) {
      first = best;
    } else {
      std::string want = std::to_string(gcc_range->max_major);
      f.fail({false, what,
              (first ? refused + "outside CUDA " + row.cuda.release_str() + "'s " + range_text("gcc", *gcc_range) +
                           " (per " + gcc_range->source + ")"
                     : std::string("no c++, g++ or clang++ on PATH")) +
                  "; no g++-N on PATH nor " + (opt_.gcc_toolset_root / "gcc-toolset-N").string() + " it accepts",
              "install gcc " + want + ": `dnf install gcc-toolset-" + want +
                  "-gcc-c++` (manylinux_2_28, RHEL) or `apt-get install g++-" + want +
                  "` (Debian, Ubuntu), or pass --host-compiler PATH"});
      return;
    }
  }
  if (!first) {
    f.fail({false, "host compiler",
            opt_.host_compiler ? opt_.host_compiler->string() + " is not a working gcc or clang"
                               : "no c++, g++ or clang++ on PATH",
            "install g++ and/or pass --host-compiler PATH"});
    return;
  }
  f.host = first->id;
  f.host_cxx = first->path;
  std::optional<SupportedRange> range = range_for(f.host->id);
  std::string found = f.host_cxx.string() + " (" + f.host->id + " " + f.host->version() + ")";
  if (!refused.empty()) found += "; " + refused + "which CUDA " + row.cuda.release_str() + " refuses";
  if (!range)
    f.checks.push_back(
        {true, what, found + "; no known range for CUDA " + row.cuda.release_str() + ", nvcc will check", ""});
  else if (auto msg = check_range(*f.host, *range, row.cuda); !msg.empty())
    f.fail({false, what, found, msg});
  else
    f.checks.push_back(
        {true, what, found + ", supported " + std::to_string(range->min_major) + "-" + std::to_string(range->max_major),
         ""});
}

GnuResolver::Found GnuResolver::discover(const matrix::Row& row, bool provision,
                                         const std::optional<matrix::TorchVersion>& stable_min_torch) {
  Found f;
  find_python(row, f);
  find_cuda(row, provision, f);
  if (opt_.without_torch)
    f.checks.push_back(
        {true, "torch " + row.torch.str(), "not needed: --kernels-only compiles the torch-free kernels alone", ""});
  else
    try {
      find_torch(row, provision, stable_min_torch, f);
    } catch (const UsageError& e) {
      f.fail({false, "torch " + row.torch.str(), e.what(), "see above"});
    } catch (const IoError& e) {
      f.fail({false, "torch " + row.torch.str(), e.what(), "check the cache directory " + opt_.cache_dir.string()});
    }
  // A per-interpreter wheel installs only into its own Python: the smoke test
  // imports it there, where that Python has the row's torch too.
  if (row.abi_mode == wheel::AbiMode::per_interpreter && f.torch_python &&
      f.torch_python->release() != row.build_python) {
    const auto& own = f.python;
    bool has_it = own && own->torch && own->torch->cuda == row.cuda.release_str() && own->torch->release() == row.torch;
    f.torch_python = has_it ? own : std::nullopt;
  }
  if (f.torch && f.row_torch_cuda.empty()) {
    f.row_torch_cuda = f.torch->cuda;
    f.row_torch_check = "torch/version.py of " + f.torch->root.string();
  }
  if (f.torch) {
    bool other_release = f.torch->release() != row.torch;
    if (other_release)
      f.checks.push_back(
          {true, "torch " + row.torch.str() + " for CUDA " + row.cuda.release_str(), f.row_torch_check, ""});
    f.checks.push_back({true,
                        std::string(other_release ? "stable-ABI headers: " : "") + "torch " +
                            f.torch->public_version() + " for CUDA " + row.cuda.release_str(),
                        f.torch->root.string() + " " + f.torch->version + ", cxx11 abi " +
                            (f.torch->cxx11_abi ? "1" : "0") + " (" + f.torch->abi_source + "; " + f.torch->origin +
                            ")",
                        ""});
  }
  find_host_compiler(row, f);
  return f;
}

RowToolchain GnuResolver::toolchain_of(Found& f) const {
  RowToolchain t;
  t.host = std::make_shared<GnuToolchain>(
      GnuTools{f.cuda->nvcc, f.cuda->version.full_str(), f.host_cxx, {f.host->id, f.host->version()}});
  t.nvcc_version = f.cuda->version.full_str();
  t.cuda_include = f.cuda->home / "include";
  t.cuda_lib = f.cuda->lib_dir();
  if (f.torch) t.torch = TorchHeaders{f.torch->root, f.torch->version, f.torch->cxx11_abi};
  t.row_torch_cuda = f.row_torch_cuda;
  t.python_include = f.python->include_dir;
  t.python_version = f.python->version();
  t.torch_importable = f.torch_python.has_value();
  t.smoke_python = f.torch_python ? f.torch_python : f.python;
  for (const char* lib : {"lib64", "lib"})
    if (fs::exists(f.cuda->home / lib / "stubs/libcuda.so")) {
      t.cuda_stubs = f.cuda->home / lib / "stubs";
      break;
    }
  t.checks = std::move(f.checks);
  return t;
}

RowToolchain GnuResolver::resolve(const matrix::Row& row, const std::optional<matrix::TorchVersion>& stable_min_torch) {
  Found f = discover(row, opt_.provision, stable_min_torch);
  if (!f.problems.empty()) {
    std::string msg = "row " + row.id + ": the toolchain is incomplete:";
    for (const auto& s : f.problems) msg += "\n  " + s;
    throw UsageError(msg);
  }
  return toolchain_of(f);
}

std::vector<Check> GnuResolver::diagnose(const matrix::Row& row) {
  try {
    return discover(row, false, std::nullopt).checks;
  } catch (const std::exception& e) {
    return {Check{false, "toolchain", e.what(), "see the message"}};
  }
}

ProvisionedHeaders GnuResolver::headers(const HeaderPackage& package, const matrix::Row& row, Check& check) {
  return provide_headers(
      runner_, opt_, package, row,
      [&] {
        std::string exe = opt_.python ? opt_.python->string() : "python3";
        auto py = python_named(exe);
        if (!py)
          throw UsageError("row " + row.id + ": " + package.requirement() + " is provisioned with pip, and " + exe +
                           " is not found or not answering; pass --python PATH");
        return *py;
      },
      check);
}

}  // namespace sb::toolchain
