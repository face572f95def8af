#include "sagebuild/toolchain/msvc_resolver.h"

#include <algorithm>

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_path.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/msvc_toolchain.h"
#include "sagebuild/toolchain/provision.h"
#include "sagebuild/toolchain/vcvars.h"
#include "sagebuild/toolchain/vswhere.h"
#include "sagebuild/toolchain/windows_python.h"

namespace sb::toolchain {

namespace fs = std::filesystem;
using run::Command;
using run::Environment;
using run::Result;
using run::win_join;

WindowsToolchainFacts placeholder_windows_facts() {
  WindowsToolchainFacts f;
  f.cuda_path = "<CUDA_PATH>";
  f.nvcc = win_join(f.cuda_path, "bin\\nvcc.exe");
  f.nvcc_version = "<nvcc version>";
  f.cl = win_join("<VCToolsInstallDir>", "bin\\Hostx64\\x64\\cl.exe");
  f.link = win_join("<VCToolsInstallDir>", "bin\\Hostx64\\x64\\link.exe");
  f.msvc_version = "<VCToolsVersion>";
  f.torch_root = "<TORCH_DIR>";
  f.torch_version = "<torch version>";
  f.torch_cuda = "<torch CUDA>";
  f.python_include = win_join("<PYTHON_PREFIX>", "include");
  f.python_lib_dir = win_join("<PYTHON_PREFIX>", "libs");
  f.placeholders = true;
  return f;
}

WindowsToolchainFacts discover_windows_toolchain(ProcessRunner& runner, const std::string& program_files_x86,
                                                 bool allow_prerelease_vs) {
  if (program_files_x86.empty())
    throw UsageError("cannot find vswhere.exe: %ProgramFiles(x86)% is not set (is this a Windows host?)");
  std::string vswhere = default_vswhere_path(program_files_x86);
  Result r = runner.run(Command(vswhere_argv(vswhere)));
  if (!r.ok())
    throw UsageError("cannot run " + vswhere + " (" + (r.spawned ? "exit " + std::to_string(r.exit_code) : r.err) +
                     "): install Visual Studio 2022 or its Build Tools with the C++ x64 tools");
  auto install = choose_install(parse_vswhere_json(r.out, vswhere), allow_prerelease_vs);
  if (!install)
    throw UsageError("vswhere.exe found no complete Visual Studio with " + std::string(kVcToolsComponent) +
                     ": install the \"Desktop development with C++\" workload");
  Command vc;
  vc.argv = {"cmd.exe"};
  vc.windows_command_line = vcvars_command_line(vcvars64_path(install->installation_path));
  Result v = runner.run(vc);
  auto set = parse_set_output(v.out);
  auto missing = missing_vcvars_names(set.env);
  if (!v.ok() || !missing.empty()) {
    std::string why;
    for (const auto& m : missing) why += (why.empty() ? "" : ", ") + m;
    for (const auto& l : set.other_lines) why += (why.empty() ? "" : "; ") + l;
    throw UsageError("vcvars64.bat of " + install->installation_path + " did not set up the C++ tools" +
                     (why.empty() ? "" : " (" + why + ")"));
  }
  WindowsToolchainFacts f = placeholder_windows_facts();
  f.placeholders = false;
  std::string tools = *set.env.get("VCToolsInstallDir");
  f.cl = win_join(tools, "bin\\Hostx64\\x64\\cl.exe");
  f.link = win_join(tools, "bin\\Hostx64\\x64\\link.exe");
  if (const auto* ver = set.env.get("VCToolsVersion")) f.msvc_version = *ver;
  // CUDA_PATH, the last toolkit NVIDIA's installer installed, if any: each
  // row's CUDA is chosen by find_windows_cuda.
  const std::string* cuda = set.env.get("CUDA_PATH");
  f.cuda_path = cuda ? *cuda : "";
  f.nvcc = f.cuda_path.empty() ? "" : win_join(f.cuda_path, "bin\\nvcc.exe");
  f.nvcc_version = "";
  f.cuda_origin = "CUDA_PATH";
  for (const auto& v2 : set.env.vars()) f.env[v2.name] = v2.value;
  return f;
}

namespace {

void use_cuda(WindowsToolchainFacts& f, const std::string& home, const std::string& origin) {
  f.cuda_path = home;
  f.nvcc = win_join(home, "bin\\nvcc.exe");
  f.cuda_origin = origin;
}

}  // namespace

void find_windows_cuda(ProcessRunner& runner, WindowsToolchainFacts& f, const matrix::Row& row,
                       const std::optional<std::string>& cuda_home, const WindowsCudaProvisioner& provision) {
  // NVIDIA's installer's variables: CUDA_PATH is the last toolkit installed,
  // CUDA_PATH_V12_8 (say) each one.
  const std::string per_version = "CUDA_PATH_V" + std::to_string(row.cuda.major) + "_" + std::to_string(row.cuda.minor);
  const std::string cuda_path = f.cuda_path;  // %CUDA_PATH%, "" when unset
  std::optional<CudaVersion> v;
  if (cuda_home) {
    use_cuda(f, *cuda_home, "--cuda-home");
  } else if (auto it = f.env.find(per_version); it != f.env.end() && !it->second.empty()) {
    use_cuda(f, it->second, per_version);
  } else {
    if (!cuda_path.empty()) {
      use_cuda(f, cuda_path, "CUDA_PATH");
      if (provision) try {
          v = query_nvcc(runner, f.nvcc);
        } catch (const UsageError&) {  // no nvcc that answers there: PyPI's serves
        }
    }
    if (provision && (!v || v->release() != row.cuda)) {
      // Installed is another release, or none: as on Linux, NVIDIA's wheels.
      use_cuda(f, provision(row.cuda), "cache (PyPI wheels)");
      v.reset();
    } else if (cuda_path.empty()) {
      throw UsageError("no CUDA " + row.cuda.release_str() + " toolkit for row " + row.id + ": neither " + per_version +
                       " nor CUDA_PATH is set; install the CUDA " + row.cuda.release_str() +
                       " toolkit for Windows (its installer sets them) or pass --cuda-home DIR");
    }
  }
  if (!v) v = query_nvcc(runner, f.nvcc);
  if (v->release() != row.cuda)
    throw UsageError(f.nvcc + " is CUDA " + v->full_str() + "; row " + row.id + " needs CUDA " +
                     row.cuda.release_str() + ": install it (" + per_version +
                     " then names it) or set CUDA_PATH to it");
  f.nvcc_version = v->full_str();
}

WindowsToolchainFacts discover_windows_row(ProcessRunner& runner, WindowsToolchainFacts f, const matrix::Row& row,
                                           const std::string& python, bool stable_abi,
                                           const std::optional<std::string>& cuda_home,
                                           const WindowsCudaProvisioner& provision) {
  find_windows_cuda(runner, f, row, cuda_home, provision);
  find_windows_python(runner, f, row, python, stable_abi);
  return f;
}

void find_windows_python(ProcessRunner& runner, WindowsToolchainFacts& f, const matrix::Row& row,
                         const std::string& python, bool stable_abi) {
  WindowsPythonFacts py = query_windows_python(runner, python);
  check_windows_python(py, row, torch_link_libraries(stable_abi));
  f.torch_root = py.torch->root;
  f.torch_version = py.torch->version;
  f.torch_cuda = py.torch->cuda;
  f.python = py.executable;
  f.python_major = py.major;
  f.python_minor = py.minor;
  f.python_include = py.include_dir;
  f.python_lib_dir = py.libs_dir;
}

Environment windows_build_environment(const WindowsToolchainFacts& facts) {
  Environment env;
  for (const auto& [name, value] : facts.env) env.set(name, value);
  return env;
}

RowToolchain msvc_row_toolchain(const WindowsToolchainFacts& f, const matrix::Row& row,
                                bool allow_unsupported_compiler) {
  RowToolchain t;
  t.host = std::make_shared<MsvcToolchain>(
      MsvcTools{f.nvcc, f.nvcc_version, f.cl, f.link, f.msvc_version, allow_unsupported_compiler});
  t.nvcc_version = f.nvcc_version;
  t.cuda_include = fs::path(f.cuda_path) / "include";
  t.cuda_lib = fs::path(f.cuda_path) / "lib" / "x64";
  // cxx11_abi is libstdc++'s: a Windows build keeps build_info.json's default.
  t.torch = TorchHeaders{f.torch_root, f.torch_version, true};
  t.row_torch_cuda = f.torch_cuda;
  t.python_include = f.python_include;
  t.python_lib_dir = f.python_lib_dir;
  t.python_version = row.build_python.str();
  if (!f.placeholders) {
    // The build Python has the row's torch (discover_windows_row checked it):
    // the smoke test imports the extension with it.
    PythonInfo py;
    py.executable = f.python;
    py.major = f.python_major;
    py.minor = f.python_minor;
    py.include_dir = f.python_include;
    py.has_headers = true;
    py.torch = PythonTorch{f.torch_version, f.torch_cuda, true, f.torch_root};
    t.smoke_python = py;
    t.torch_importable = true;
  }
  return t;
}

MsvcResolver::MsvcResolver(ProcessRunner& runner, ToolchainOptions options, std::optional<Host> host)
    : runner_(runner), opt_(std::move(options)), host_(std::move(host)) {}

// Visual Studio, once per build.  A dry run goes on with placeholders where
// it is missing, and says so.
void MsvcResolver::find_visual_studio() {
  if (vs_) return;
  try {
    if (!host_) throw UsageError("not discoverable on this host");
    vs_ = discover_windows_toolchain(runner_, host_->program_files_x86);
    vc_runner_ = host_->make_runner(windows_build_environment(*vs_));
  } catch (const UsageError& e) {
    if (!opt_.plan_only) throw;
    vs_ = placeholder_windows_facts();
    vs_problem_ = e.what();
  }
}

namespace {

// A dry run's or doctor's provisioner finds the row's CUDA neither installed
// nor in the cache: `build` would download it into `entry`.
struct CudaNotCached : UsageError {
  explicit CudaNotCached(const fs::path& e) : UsageError("not in the cache " + e.string()), entry(e) {}
  fs::path entry;
};

}  // namespace

WindowsToolchainFacts MsvcResolver::facts_for(const matrix::Row& row, bool stable_abi, std::vector<Check>& checks) {
  find_visual_studio();
  if (vs_->placeholders) {
    checks.push_back({false, "Windows toolchain", vs_problem_, "the plan shows <placeholders> for what it would find"});
    WindowsToolchainFacts f = *vs_;
    if (auto home = cuda_home()) {  // the toolkit the job installed, as it names it
      use_cuda(f, *home, "--cuda-home");
    } else if (cuda_from_pypi(row)) {  // unless one is installed, `build` provisions it into its cache
      use_cuda(f, win_join("<CACHE_DIR>", "cuda\\" + row.cuda.release_str()), "to be provisioned from PyPI");
    }
    return f;
  }
  std::string python = opt_.python ? opt_.python->string() : "python";
  WindowsToolchainFacts f = *vs_;
  try {
    find_windows_cuda(*vc_runner_, f, row, cuda_home(), provisioner(row, python));
    checks.push_back(
        {true, "CUDA " + row.cuda.release_str(), f.nvcc + " " + f.nvcc_version + " (" + f.cuda_origin + ")", ""});
  } catch (const CudaNotCached& e) {  // a dry run or doctor: nothing is downloaded
    use_cuda(f, e.entry.string(), "to be provisioned from PyPI");
    f.nvcc_version = placeholder_windows_facts().nvcc_version;
    const std::string how =
        "`sagebuild build` downloads NVIDIA's win_amd64 wheels of CUDA " + row.cuda.release_str() + " from PyPI";
    if (opt_.plan_only)
      checks.push_back(
          {true, "CUDA " + row.cuda.release_str(), f.nvcc + " (dry run: " + e.what() + "; " + how + " into it)", ""});
    else
      checks.push_back({false, "CUDA " + row.cuda.release_str(), e.what(), how + " into it"});
  } catch (const UsageError& e) {
    if (!opt_.plan_only) throw;
    checks.push_back({false, "CUDA " + row.cuda.release_str(), e.what(), "the plan shows <CUDA_PATH> for it"});
    const WindowsToolchainFacts p = placeholder_windows_facts();
    use_cuda(f, p.cuda_path, "placeholder");
    f.nvcc_version = p.nvcc_version;
    f.placeholders = true;
  }
  try {
    find_windows_python(*vc_runner_, f, row, python, stable_abi);
  } catch (const UsageError& e) {
    if (!opt_.plan_only) throw;
    checks.push_back({false, "torch " + row.torch.str() + " for CUDA " + row.cuda.release_str(), e.what(),
                      "the plan shows <placeholders> for it"});
    const WindowsToolchainFacts p = placeholder_windows_facts();
    f.torch_root = p.torch_root;
    f.torch_version = p.torch_version;
    f.torch_cuda = p.torch_cuda;
    f.python_include = p.python_include;
    f.python_lib_dir = p.python_lib_dir;
    f.placeholders = true;
  }
  return f;
}

bool MsvcResolver::cuda_from_pypi(const matrix::Row& row) const {
  return !cuda_home() && cuda_provisioned_from_pypi(row.cuda, row.platform);
}

WindowsCudaProvisioner MsvcResolver::provisioner(const matrix::Row& row, const std::string& python) {
  if (!cuda_from_pypi(row)) return {};
  if (!opt_.provision)
    return [this](const matrix::CudaVersion& cuda) -> std::string {
      fs::path entry = cuda_cache_entry(opt_.cache_dir, cuda);
      if (!fs::exists(entry / "bin" / "nvcc.exe")) throw CudaNotCached(entry);
      return entry.string();
    };
  return [this, python, platform = row.platform](const matrix::CudaVersion& cuda) {
    PythonInfo pip;  // the build Python, whose pip downloads the wheels
    pip.executable = python;
    return provision_cuda(*vc_runner_, opt_, pip, cuda, platform).string();
  };
}

std::optional<std::string> MsvcResolver::cuda_home() const {
  if (!opt_.cuda_home) return std::nullopt;
  return opt_.cuda_home->string();
}

RowToolchain MsvcResolver::resolve(const matrix::Row& row,
                                   const std::optional<matrix::TorchVersion>& stable_min_torch) {
  if (row.platform != "win_amd64")
    throw UsageError("row " + row.id + " is for " + row.platform +
                     ", not win_amd64: the MSVC toolchain cannot build it");
  std::vector<Check> checks;
  WindowsToolchainFacts f = facts_for(row, stable_min_torch.has_value(), checks);
  RowToolchain t = msvc_row_toolchain(f, row, opt_.allow_unsupported_compiler);
  if (!f.placeholders) {
    checks.push_back({true, "MSVC " + f.msvc_version, f.cl, ""});
    checks.push_back({true, "torch " + row.torch.str() + " for CUDA " + row.cuda.release_str(),
                      f.torch_root + " " + f.torch_version, ""});
    checks.push_back({true, "Python headers and import libraries", f.python_include + ", " + f.python_lib_dir, ""});
  }
  t.placeholders = f.placeholders;
  t.checks = std::move(checks);
  return t;
}

std::vector<Check> MsvcResolver::diagnose(const matrix::Row& row) {
  try {
    return resolve(row, std::nullopt).checks;
  } catch (const std::exception& e) {
    return {Check{false, "Windows toolchain", e.what(), "see the message"}};
  }
}

// The same pure wheel and cache entry as a Linux row's (provide_headers),
// downloaded by the build Python's pip in vcvars64's environment.  Off
// Windows (a dry run with placeholders) the plan names it under <CACHE_DIR>,
// as it does the row's CUDA, and nothing is looked at or downloaded.
ProvisionedHeaders MsvcResolver::headers(const HeaderPackage& package, const matrix::Row& row, Check& check) {
  find_visual_studio();
  if (vs_->placeholders) {
    const fs::path entry = headers_entry("<CACHE_DIR>", package);
    check = {
        true, package.name + " " + package.version + " headers",
        run::to_backslashes(entry.string()) + " (dry run: `build` downloads " + package.requirement() + " from PyPI)",
        ""};
    ProvisionedHeaders out{package.requirement(), {}};
    for (const auto& dir : package.include_dirs)
      out.include_dirs.push_back(run::to_backslashes((entry / dir).string()));
    return out;
  }
  return provide_headers(
      *vc_runner_, opt_, package, row,
      [this] {
        PythonInfo pip;  // the build Python, as for the row's CUDA
        pip.executable = opt_.python ? opt_.python->string() : "python";
        return pip;
      },
      check);
}

}  // namespace sb::toolchain
