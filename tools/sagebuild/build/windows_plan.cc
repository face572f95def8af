#include "sagebuild/build/windows_plan.h"

#include <algorithm>
#include <set>

#include "sagebuild/build/cuda.h"
#include "sagebuild/build/windows_python.h"
#include "sagebuild/common/error.h"
#include "sagebuild/platform/msvc_toolchain.h"
#include "sagebuild/platform/vcvars.h"
#include "sagebuild/platform/vswhere.h"
#include "sagebuild/platform/win_cmdline.h"
#include "sagebuild/platform/win_path.h"

namespace sb::build {

namespace fs = std::filesystem;
using platform::win_join;

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

WindowsToolchainFacts discover_windows_toolchain(ProcessRunner& runner, const WindowsDiscoveryOptions& o) {
  if (o.program_files_x86.empty())
    throw UsageError("cannot find vswhere.exe: %ProgramFiles(x86)% is not set (is this a Windows host?)");
  std::string vswhere = platform::default_vswhere_path(o.program_files_x86);
  Result r = runner.run(Command(platform::vswhere_argv(vswhere)));
  if (!r.ok())
    throw UsageError("cannot run " + vswhere + " (" + (r.spawned ? "exit " + std::to_string(r.exit_code) : r.err) +
                     "): install Visual Studio 2022 or its Build Tools with the C++ x64 tools");
  auto install = platform::choose_install(platform::parse_vswhere_json(r.out, vswhere), o.allow_prerelease_vs);
  if (!install)
    throw UsageError("vswhere.exe found no complete Visual Studio with " + std::string(platform::kVcToolsComponent) +
                     ": install the \"Desktop development with C++\" workload");
  Command vc;
  vc.argv = {"cmd.exe"};
  vc.windows_command_line = platform::vcvars_command_line(platform::vcvars64_path(install->installation_path));
  Result v = runner.run(vc);
  auto set = platform::parse_set_output(v.out);
  auto missing = platform::missing_vcvars_names(set.env);
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

WindowsToolchainFacts discover_windows_row(ProcessRunner& runner, WindowsToolchainFacts f, const sb::matrix::Row& row,
                                           const std::string& python) {
  // NVIDIA's installer sets CUDA_PATH to the last toolkit installed and
  // CUDA_PATH_V12_8 (say) for each one.
  std::string per_version = "CUDA_PATH_V" + row.cuda;
  std::replace(per_version.begin(), per_version.end(), '.', '_');
  if (auto it = f.env.find(per_version); it != f.env.end() && !it->second.empty()) {
    f.cuda_path = it->second;
    f.nvcc = win_join(f.cuda_path, "bin\\nvcc.exe");
  }
  NvccVersion v = query_nvcc(runner, f.nvcc);
  if (v.short_str() != row.cuda)
    throw UsageError(f.nvcc + " is CUDA " + v.str() + "; row " + row.id + " needs CUDA " + row.cuda + ": install it (" +
                     per_version + " then names it) or set CUDA_PATH to it");
  f.nvcc_version = v.str();

  WindowsPythonFacts py = query_windows_python(runner, python);
  check_windows_python(py, row, platform::torch_link_libraries());
  f.torch_root = py.torch->root;
  f.torch_version = py.torch->version;
  f.torch_cuda = py.torch->cuda;
  f.python_include = py.include_dir;
  f.python_lib_dir = py.libs_dir;
  return f;
}

platform::Environment windows_build_environment(const WindowsToolchainFacts& facts) {
  platform::Environment env;
  for (const auto& [name, value] : facts.env) env.set(name, value);
  return env;
}

namespace {

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

platform::CxxStandard parse_std(const std::string& flag, const std::string& origin) {
  if (flag == "-std=c++17") return platform::CxxStandard::Cxx17;
  if (flag == "-std=c++20") return platform::CxxStandard::Cxx20;
  throw UsageError(origin + ": " + flag + " has no MSVC equivalent (Windows builds take -std=c++17 or -std=c++20)");
}

std::string arch_list(const std::vector<sb::matrix::Arch>& archs) {
  std::string s;
  for (const auto& a : archs) s += (s.empty() ? "" : " ") + a.name;
  return s;
}

// nvcc's -gencode flags as the platform unit's CompileJob wants them.
std::vector<std::string> gencode_values(const std::vector<std::string>& flags) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < flags.size(); i += 2) out.push_back(flags[i + 1]);
  return out;
}

}  // namespace

TranslatedFlags windows_nvcc_flags(const std::vector<std::string>& flags, const std::string& origin) {
  TranslatedFlags t;
  for (const auto& f : flags) {
    if (starts_with(f, "-std=")) t.standard = parse_std(f, origin);
    else if (f == "-Xcompiler=-fPIC" || f == "-Xcompiler=-fvisibility=hidden") continue;  // no meaning for a DLL
    else if (starts_with(f, "-Xcompiler") || starts_with(f, "--compiler-options"))
      throw UsageError(origin + ": nvcc flag " + f + " passes a host-compiler flag that sagebuild cannot translate "
                       "for cl.exe");
    else t.extra.push_back(f);
  }
  return t;
}

TranslatedFlags windows_cxx_flags(const std::vector<std::string>& flags, const std::string& origin) {
  TranslatedFlags t;
  for (const auto& f : flags) {
    if (starts_with(f, "-std=")) t.standard = parse_std(f, origin);
    else if (f == "-O2" || f == "-fPIC" || f == "-fvisibility=hidden") continue;
    else if (starts_with(f, "-D") && f.size() > 2) t.defines.push_back(f.substr(2));
    else
      throw UsageError(origin + ": binding flag " + f + " has no cl.exe translation in sagebuild (known: -std=c++17, "
                       "-std=c++20, -D..., -O2, -fPIC, -fvisibility=hidden)");
  }
  return t;
}

WindowsPlan plan_windows_compile(const std::vector<WindowsRowInput>& rows, const WindowsPlanSettings& st,
                                 bool allow_unsupported_compiler) {
  WindowsPlan plan;
  std::set<std::string> planned;
  std::vector<Edge> bindings, links;
  for (const auto& in : rows) {
    const auto& row = in.row;
    const auto& man = in.manifest;
    const auto& fx = in.facts;
    if (row.platform != "win_amd64")
      throw UsageError("row " + row.id + " is for " + row.platform + ", not win_amd64: the Windows planner cannot plan it");
    platform::MsvcToolchain msvc(platform::MsvcTools{fx.nvcc, fx.cl, fx.link, allow_unsupported_compiler});
    const platform::HostToolchain& tc = msvc;  // every command line below comes from the interface

    RowGraph rg;
    rg.row_id = row.id;
    std::vector<fs::path> key_inc;  // for the object keys (read from this checkout)
    std::vector<std::string> inc;   // for the command lines
    for (const auto& d : man.include_dirs) {
      key_inc.push_back(st.repo_root / d);
      inc.push_back(win_join(st.win_repo_root, d));
    }
    std::string origin = man.path.string();
    TranslatedFlags nv = windows_nvcc_flags(man.nvcc_flags.empty() ? std::vector<std::string>{"-std=c++17", "-O3"}
                                                                   : man.nvcc_flags,
                                            origin);
    std::string compiler = "nvcc " + fx.nvcc_version + " / msvc " + fx.msvc_version +
                           (allow_unsupported_compiler ? " allow-unsupported" : "");
    auto add = [&](PlannedObject& obj, std::vector<std::string> argv, const std::string& desc, std::vector<Edge>& to) {
      obj.object = win_join(st.win_objects_dir, obj.key + ".obj");
      if (!planned.insert(obj.object.string()).second) return;
      Edge e;
      e.output = obj.object;
      e.temp = obj.object;
      e.inputs = {obj.source};
      e.argv = std::move(argv);
      e.description = desc;
      to.push_back(std::move(e));
    };

    for (const auto& fam : man.families) {
      auto gencode = family_gencode_flags(fam, row.archs, row.ptx_arch);
      if (gencode.empty()) {
        rg.skipped_families.push_back({fam.name, skip_reason(fam)});
        continue;
      }
      rg.families.push_back(fam.name);
      std::vector<std::string> key_flags = nv.extra;
      key_flags.push_back(nv.standard == platform::CxxStandard::Cxx20 ? "std20" : "std17");
      key_flags.insert(key_flags.end(), gencode.begin(), gencode.end());
      for (const auto& src : fam.sources) {
        PlannedObject obj;
        obj.family = fam.name;
        obj.source = win_join(st.win_repo_root, src);
        obj.key = object_key(ObjectKeyInput{st.repo_root / src, st.repo_root, key_inc, compiler, key_flags, "win_amd64"},
                             st.read);
        obj.object = win_join(st.win_objects_dir, obj.key + ".obj");
        platform::CompileJob job;
        job.source = obj.source.string();
        job.object = obj.object.string();
        job.kind = platform::SourceKind::Cuda;
        job.standard = nv.standard;
        job.include_dirs = inc;
        job.cuda_gencode = gencode_values(gencode);
        job.extra_flags = nv.extra;
        add(obj, tc.compile_command(job),
            "nvcc " + fam.name + " " + src + " [" + arch_list(family_targets(fam, row.archs)) + "] (Windows)",
            plan.edges);
        rg.kernels.push_back(obj);
      }
    }

    // The binding: cl.exe against torch's headers (stable-ABI rows: the stable binding).
    const StableAbiBinding* stable = man.stable_binding_for(row.torch);
    if (!stable && man.binding_sources.size() != 1)
      throw UsageError(origin + ": binding.sources must name exactly one file (got " +
                       std::to_string(man.binding_sources.size()) + ")");
    const std::string src = stable ? stable->source : man.binding_sources.front();
    TranslatedFlags cx = windows_cxx_flags(man.cxx_flags.empty() ? std::vector<std::string>{"-std=c++17"} : man.cxx_flags,
                                           origin);
    bool abi3 = row.abi_mode == sb::matrix::AbiMode::abi3;
    std::string py_min = row.pythons.empty() ? row.build_python : row.pythons.front();
    std::vector<std::string> defines = cx.defines;
    defines.push_back("TORCH_EXTENSION_NAME=_C");
    if (stable) defines.push_back("TORCH_TARGET_VERSION=" + stable->target_version_macro());
    for (const auto& d : man.binding_defines)
      if (!starts_with(d, "Py_LIMITED_API")) defines.push_back(d);
    if (abi3) defines.push_back("Py_LIMITED_API=" + limited_api_hex(py_min));
    PlannedObject b;
    b.family = "binding";
    b.source = win_join(st.win_repo_root, src);
    std::vector<std::string> key_flags = defines;
    key_flags.push_back(cx.standard == platform::CxxStandard::Cxx20 ? "std20" : "std17");
    std::string torch_id = stable ? "torch stable-abi target " + stable->target_version.str() : "torch " + row.torch;
    b.key = object_key(ObjectKeyInput{st.repo_root / src, st.repo_root, key_inc, "msvc " + fx.msvc_version, key_flags,
                                      torch_id + " cuda " + fx.nvcc_version + " win_amd64"},
                       st.read);
    b.object = win_join(st.win_objects_dir, b.key + ".obj");
    platform::CompileJob job;
    job.source = b.source.string();
    job.object = b.object.string();
    job.kind = platform::SourceKind::Cxx;
    job.standard = cx.standard;
    job.include_dirs = inc;
    for (const auto& d : {win_join(fx.torch_root, "include"), win_join(fx.torch_root, "include\\torch\\csrc\\api\\include"),
                          win_join(fx.cuda_path, "include"), fx.python_include})
      job.include_dirs.push_back(d);
    job.defines = defines;
    add(b, tc.compile_command(job),
        "cl binding " + src + (stable ? " [stable ABI " + stable->target_version.str() + "]" : " [torch " + row.torch + "]") +
            " (Windows)",
        bindings);
    rg.binding = b;
    if (stable) rg.stable_abi_target = stable->target_version.str();

    // The link: link.exe writes <work>\rows\<id>\_C.pyd.
    platform::LinkJob lj;
    for (const auto& k : rg.kernels) lj.objects.push_back(k.object.string());
    lj.objects.push_back(b.object.string());
    lj.output_dir = win_join(st.win_work_dir, "rows\\" + row.id);
    lj.abi = abi3 ? platform::AbiMode::Abi3 : platform::AbiMode::PerInterpreter;
    {
      auto dot = row.build_python.find('.');
      if (dot == std::string::npos) throw UsageError("row " + row.id + ": Python \"" + row.build_python + "\" is not <major>.<minor>");
      lj.python.major = std::stoi(row.build_python.substr(0, dot));
      lj.python.minor = std::stoi(row.build_python.substr(dot + 1));
    }
    lj.torch_lib_dir = win_join(fx.torch_root, "lib");
    lj.cuda_lib_dir = win_join(fx.cuda_path, "lib\\x64");
    lj.cudart_static = man.cudart_static;
    lj.python_lib_dir = fx.python_lib_dir;
    rg.extension_name = tc.extension_filename(lj.abi, lj.python);
    rg.extension = win_join(lj.output_dir, rg.extension_name);
    Edge link;
    link.output = rg.extension;
    link.temp = rg.extension;
    link.inputs.assign(lj.objects.begin(), lj.objects.end());
    link.argv = tc.link_command(lj);
    link.description = "link " + row.id + "\\" + rg.extension_name + " (Windows)";
    links.push_back(std::move(link));
    plan.rows.push_back(std::move(rg));
  }
  for (auto& e : bindings) plan.edges.push_back(std::move(e));
  for (auto& e : links) plan.edges.push_back(std::move(e));
  return plan;
}

std::string windows_command_line(const Edge& e) { return platform::join_command_line(e.argv); }

}  // namespace sb::build
