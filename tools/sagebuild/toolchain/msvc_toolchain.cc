#include "sagebuild/toolchain/msvc_toolchain.h"

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_cmdline.h"
#include "sagebuild/run/win_path.h"

namespace sb::toolchain {

namespace {

std::string msvc_std_flag(CxxStandard s) { return s == CxxStandard::cxx20 ? "/std:c++20" : "/std:c++17"; }

std::string nvcc_std_flag(CxxStandard s) { return s == CxxStandard::cxx20 ? "-std=c++20" : "-std=c++17"; }

// A path as the Windows tools are given it.
std::string win(const std::filesystem::path& p) { return run::to_backslashes(p.string()); }

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

std::vector<std::string> msvc_cl_flags(CxxStandard standard) {
  return {"/O2", "/MD", "/EHsc", msvc_std_flag(standard), "/Zc:preprocessor"};
}

std::vector<std::string> msvc_host_flags(const std::vector<std::string>& gcc_flags, const std::string& origin) {
  for (const auto& f : gcc_flags)
    if (f != "-O2" && f != "-O3" && f != "-fPIC" && f != "-fvisibility=hidden")
      throw UsageError(origin + ": host compiler flag " + f +
                       " has no cl.exe translation in sagebuild (known: -O2, -O3, "
                       "-fPIC, -fvisibility=hidden); give it only to the Linux toolchain or drop it");
  return {};
}

std::string MsvcToolchain::identity() const {
  return "nvcc " + tools_.nvcc_version + " / msvc " + tools_.msvc_version +
         (tools_.allow_unsupported_compiler ? " allow-unsupported-compiler" : "");
}

std::vector<std::string> MsvcToolchain::compile_command(const CompileJob& job) const {
  return job.kind == SourceKind::cuda ? nvcc_command(job) : cl_command(job);
}

std::vector<std::string> MsvcToolchain::nvcc_command(const CompileJob& job) const {
  std::vector<std::string> argv{tools_.nvcc, job.preprocess_only ? "-E" : "-c", win(job.source), "-o", win(job.object)};
  // -ccbin takes cl.exe's directory: nvcc then finds the cl.exe we chose
  // rather than whichever is first on PATH.
  argv.insert(argv.end(), {"-ccbin", run::win_parent(tools_.cl)});
  if (tools_.allow_unsupported_compiler) argv.push_back("-allow-unsupported-compiler");
  argv.push_back(nvcc_std_flag(job.standard));
  // nvcc sets the standard for cl itself; the other host flags go through
  // -Xcompiler one by one (a comma would split a flag that contains one).
  std::vector<std::string> host = msvc_cl_flags(job.standard);
  append(host, msvc_host_flags(job.host_flags, job.flags_origin));
  for (const auto& flag : host)
    if (flag.rfind("/std:", 0) != 0) argv.insert(argv.end(), {"-Xcompiler", flag});
  for (const auto& g : job.gencode) argv.push_back("-gencode=" + g);
  for (auto& f : nvcc_thread_flags(job)) argv.push_back(std::move(f));
  for (const auto& dir : job.include_dirs) argv.push_back("-I" + win(dir));
  for (const auto& dir : job.system_include_dirs) argv.push_back("-I" + win(dir));
  for (const auto& def : job.defines) argv.push_back("-D" + def);
  append(argv, job.device_flags);
  return argv;
}

std::vector<std::string> MsvcToolchain::cl_command(const CompileJob& job) const {
  std::vector<std::string> argv{tools_.cl, "/nologo", job.preprocess_only ? "/P" : "/c", win(job.source),
                                (job.preprocess_only ? "/Fi" : "/Fo") + win(job.object)};
  append(argv, msvc_cl_flags(job.standard));
  append(argv, msvc_host_flags(job.host_flags, job.flags_origin));
  for (const auto& dir : job.include_dirs) argv.push_back("/I" + win(dir));
  for (const auto& dir : job.system_include_dirs) argv.push_back("/I" + win(dir));
  for (const auto& def : job.defines) argv.push_back("/D" + def);
  return argv;
}

std::vector<std::string> MsvcToolchain::link_command(const LinkJob& job) const {
  // No import library or exports file beside the .pyd: nothing links to it.
  std::vector<std::string> argv{tools_.link, "/nologo", "/DLL", "/NOIMPLIB", "/NOEXP", "/OUT:" + win(job.output)};
  for (const auto& o : job.objects) argv.push_back(win(o));
  // Import libraries by full path: no /LIBPATH search that could pick up
  // another torch or CUDA.  link.exe imports only the DLLs whose symbols the
  // objects use, so a library the binding does not call costs nothing.
  for (const auto& lib : job.torch_libs) argv.push_back(win(job.torch_lib_dir / (lib + ".lib")));
  // cudart_static.lib needs no further system library: what it calls is in
  // kernel32, which the /MD C runtime's own default libraries bring in
  // (CMake's FindCUDAToolkit adds Threads, dl and rt for it on UNIX only).
  argv.push_back(win(job.cuda_lib_dir / (job.cudart_static ? "cudart_static.lib" : "cudart.lib")));
  // Further libraries (cuda.lib, the driver) from CUDA's own library folder.
  for (const auto& lib : job.libraries) argv.push_back(win(job.cuda_lib_dir / (lib + ".lib")));
  std::string python_lib = job.abi == wheel::AbiMode::abi3 ? "python3.lib" : "python" + job.python.nodot() + ".lib";
  argv.push_back(win(job.python_lib_dir / python_lib));
  return argv;
}

}  // namespace sb::toolchain
