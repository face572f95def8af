#include "sagebuild/platform/msvc_toolchain.h"

#include "sagebuild/platform/win_path.h"

namespace sb::platform {

namespace {

std::string msvc_std_flag(CxxStandard s) {
  return s == CxxStandard::Cxx20 ? "/std:c++20" : "/std:c++17";
}

std::string nvcc_std_flag(CxxStandard s) {
  return s == CxxStandard::Cxx20 ? "-std=c++20" : "-std=c++17";
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

std::vector<std::string> msvc_cl_flags(CxxStandard standard) {
  return {"/O2", "/MD", "/EHsc", msvc_std_flag(standard), "/Zc:preprocessor"};
}

std::vector<std::string> MsvcToolchain::compile_command(const CompileJob& job) const {
  return job.kind == SourceKind::Cuda ? nvcc_command(job) : cl_command(job);
}

std::vector<std::string> MsvcToolchain::nvcc_command(const CompileJob& job) const {
  std::vector<std::string> argv{tools_.nvcc, "-c", job.source, "-o", job.object};
  // -ccbin takes cl.exe's directory: nvcc then finds the cl.exe we chose
  // rather than whichever is first on PATH.
  argv.insert(argv.end(), {"-ccbin", win_parent(tools_.cl)});
  if (tools_.allow_unsupported_compiler) argv.push_back("-allow-unsupported-compiler");
  argv.push_back(nvcc_std_flag(job.standard));
  // nvcc sets the standard for cl itself; the other host flags go through
  // -Xcompiler one by one (a comma would split a flag that contains one).
  for (const auto& flag : msvc_cl_flags(job.standard)) {
    if (flag.rfind("/std:", 0) == 0) continue;
    argv.insert(argv.end(), {"-Xcompiler", flag});
  }
  for (const auto& g : job.cuda_gencode) argv.push_back("-gencode=" + g);
  for (const auto& dir : job.include_dirs) argv.push_back("-I" + dir);
  for (const auto& def : job.defines) argv.push_back("-D" + def);
  append(argv, job.extra_flags);
  return argv;
}

std::vector<std::string> MsvcToolchain::cl_command(const CompileJob& job) const {
  std::vector<std::string> argv{tools_.cl, "/nologo", "/c", job.source, "/Fo" + job.object};
  append(argv, msvc_cl_flags(job.standard));
  for (const auto& dir : job.include_dirs) argv.push_back("/I" + dir);
  for (const auto& def : job.defines) argv.push_back("/D" + def);
  append(argv, job.extra_flags);
  return argv;
}

std::vector<std::string> MsvcToolchain::link_command(const LinkJob& job) const {
  std::vector<std::string> argv{tools_.link, "/nologo", "/DLL",
                                "/OUT:" + win_join(job.output_dir,
                                                   extension_filename(job.abi, job.python))};
  append(argv, job.objects);
  // Import libraries by full path: no /LIBPATH search that could pick up
  // another torch or CUDA.
  for (const auto& lib : torch_link_libraries())
    argv.push_back(win_join(job.torch_lib_dir, lib + ".lib"));
  // cudart_static.lib needs no further system library: what it calls is in
  // kernel32, which the /MD C runtime's own default libraries bring in
  // (CMake's FindCUDAToolkit adds Threads, dl and rt for it on UNIX only).
  argv.push_back(win_join(job.cuda_lib_dir, job.cudart_static ? "cudart_static.lib" : "cudart.lib"));
  std::string python_lib =
      job.abi == AbiMode::Abi3 ? "python3.lib" : "python" + job.python.nodot() + ".lib";
  argv.push_back(win_join(job.python_lib_dir, python_lib));
  return argv;
}

std::string MsvcToolchain::extension_filename(AbiMode abi, const PythonVersion& python) const {
  if (abi == AbiMode::Abi3) return "_C.pyd";
  return "_C.cp" + python.nodot() + "-" + platform_tag() + ".pyd";
}

std::string windows_cudart_lib_dir(const std::optional<std::string>& cuda_path,
                                   std::string_view site_packages) {
  if (cuda_path && !cuda_path->empty()) return win_join(*cuda_path, "lib\\x64");
  return win_join(site_packages, "nvidia\\cuda_runtime\\lib\\x64");
}

}  // namespace sb::platform
