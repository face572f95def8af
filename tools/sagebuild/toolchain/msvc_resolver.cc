#include "sagebuild/toolchain/msvc_resolver.h"

#include <algorithm>

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_path.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/msvc_toolchain.h"
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
  const std::string* cuda = set.env.get("CUDA_PATH");
  if (!cuda || cuda->empty())
    throw UsageError("CUDA_PATH is not set: install the CUDA toolkit for Windows (its installer sets CUDA_PATH)");
  f.cuda_path = *cuda;
  f.nvcc = win_join(*cuda, "bin\\nvcc.exe");
  for (const auto& v2 : set.env.vars()) f.env[v2.name] = v2.value;
  return f;
}

WindowsToolchainFacts discover_windows_row(ProcessRunner& runner, WindowsToolchainFacts f, const matrix::Row& row,
                                           const std::string& python, bool stable_abi,
                                           const std::optional<std::string>& cuda_home) {
  // --cuda-home names the toolkit; else NVIDIA's installer's variables:
  // CUDA_PATH is the last toolkit installed, CUDA_PATH_V12_8 (say) each one.
  std::string per_version = "CUDA_PATH_V" + row.cuda;
  std::replace(per_version.begin(), per_version.end(), '.', '_');
  if (cuda_home) {
    f.cuda_path = *cuda_home;
    f.nvcc = win_join(f.cuda_path, "bin\\nvcc.exe");
  } else if (auto it = f.env.find(per_version); it != f.env.end() && !it->second.empty()) {
    f.cuda_path = it->second;
    f.nvcc = win_join(f.cuda_path, "bin\\nvcc.exe");
  }
  NvccVersion v = query_nvcc(runner, f.nvcc);
  if (v.short_str() != row.cuda)
    throw UsageError(f.nvcc + " is CUDA " + v.str() + "; row " + row.id + " needs CUDA " + row.cuda + ": install it (" +
                     per_version + " then names it) or set CUDA_PATH to it");
  f.nvcc_version = v.str();

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
  return f;
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
  t.python_version = row.build_python;
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

WindowsToolchainFacts MsvcResolver::facts_for(const matrix::Row& row, bool stable_abi, std::vector<Check>& checks) {
  find_visual_studio();
  if (vs_->placeholders) {
    checks.push_back({false, "Windows toolchain", vs_problem_, "the plan shows <placeholders> for what it would find"});
    WindowsToolchainFacts f = *vs_;
    if (auto home = cuda_home()) {  // the toolkit the job installed, as it names it
      f.cuda_path = *home;
      f.nvcc = win_join(*home, "bin\\nvcc.exe");
    }
    return f;
  }
  std::string python = opt_.python ? opt_.python->string() : "python";
  try {
    return discover_windows_row(*vc_runner_, *vs_, row, python, stable_abi, cuda_home());
  } catch (const UsageError& e) {
    if (!opt_.plan_only) throw;
    checks.push_back(
        {false, "CUDA " + row.cuda + " and torch " + row.torch, e.what(), "the plan shows <placeholders> for them"});
    WindowsToolchainFacts f = placeholder_windows_facts();
    f.cl = vs_->cl;
    f.link = vs_->link;
    f.msvc_version = vs_->msvc_version;
    return f;
  }
}

std::optional<std::string> MsvcResolver::cuda_home() const {
  if (!opt_.cuda_home) return std::nullopt;
  return opt_.cuda_home->string();
}

RowToolchain MsvcResolver::resolve(const matrix::Row& row, const std::optional<TorchMinor>& stable_min_torch) {
  if (row.platform != "win_amd64")
    throw UsageError("row " + row.id + " is for " + row.platform +
                     ", not win_amd64: the MSVC toolchain cannot build it");
  std::vector<Check> checks;
  WindowsToolchainFacts f = facts_for(row, stable_min_torch.has_value(), checks);
  RowToolchain t = msvc_row_toolchain(f, row, opt_.allow_unsupported_compiler);
  if (!f.placeholders) {
    checks.push_back({true, "MSVC " + f.msvc_version, f.cl, ""});
    checks.push_back({true, "CUDA " + row.cuda, f.nvcc + " " + f.nvcc_version, ""});
    checks.push_back({true, "torch " + row.torch + " for CUDA " + row.cuda, f.torch_root + " " + f.torch_version, ""});
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

// No source of a win_amd64 row asks for one yet (upstream's trees, which
// do, build Linux rows): refused by name rather than guessed at.
ProvisionedHeaders MsvcResolver::headers(const HeaderPackage& package, const matrix::Row& row, Check&) {
  throw UsageError("row " + row.id + " needs the header package " + package.requirement() +
                   ", which sagebuild provisions for Linux rows only");
}

}  // namespace sb::toolchain
