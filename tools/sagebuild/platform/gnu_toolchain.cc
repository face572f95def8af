#include "sagebuild/platform/gnu_toolchain.h"

#include <filesystem>

namespace sb::platform {

namespace {

std::string std_flag(CxxStandard s) { return s == CxxStandard::Cxx20 ? "-std=c++20" : "-std=c++17"; }

std::string join_path(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).generic_string();
}

}  // namespace

std::vector<std::string> GnuToolchain::compile_command(const CompileJob& job) const {
  std::vector<std::string> argv;
  if (job.kind == SourceKind::Cuda) {
    argv = {tools_.nvcc, "-c", job.source, "-o", job.object, "-ccbin", tools_.cxx,
            std_flag(job.standard), "-Xcompiler", "-fPIC"};
    for (const auto& g : job.cuda_gencode) argv.push_back("-gencode=" + g);
  } else {
    argv = {tools_.cxx, "-c", job.source, "-o", job.object, std_flag(job.standard), "-fPIC",
            "-O2"};
  }
  for (const auto& dir : job.include_dirs) argv.push_back("-I" + dir);
  for (const auto& def : job.defines) argv.push_back("-D" + def);
  argv.insert(argv.end(), job.extra_flags.begin(), job.extra_flags.end());
  return argv;
}

std::vector<std::string> GnuToolchain::link_command(const LinkJob& job) const {
  std::vector<std::string> argv{tools_.cxx, "-shared", "-o",
                                join_path(job.output_dir, extension_filename(job.abi, job.python))};
  argv.insert(argv.end(), job.objects.begin(), job.objects.end());
  argv.push_back("-L" + job.torch_lib_dir);
  for (const auto& lib : torch_link_libraries()) argv.push_back("-l" + lib);
  argv.push_back("-L" + job.cuda_lib_dir);
  if (job.cudart_static) argv.insert(argv.end(), {"-l:libcudart_static.a", "-ldl", "-lrt", "-lpthread"});
  else argv.push_back("-lcudart");
  // No libpython: the interpreter provides its symbols when it loads us.
  return argv;
}

std::string GnuToolchain::extension_filename(AbiMode abi, const PythonVersion& python) const {
  if (abi == AbiMode::Abi3) return "_C.abi3.so";
  return "_C.cpython-" + python.nodot() + "-" + tools_.arch + "-linux-gnu.so";
}

}  // namespace sb::platform
