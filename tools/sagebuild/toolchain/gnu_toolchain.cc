#include "sagebuild/toolchain/gnu_toolchain.h"

#include <algorithm>

namespace sb::toolchain {

namespace {

std::string std_flag(CxxStandard s) { return s == CxxStandard::cxx20 ? "-std=c++20" : "-std=c++17"; }

// GCC's (and clang's) spelling of "do not record this prefix": __FILE__,
// debug info and the like name paths below it relative to it.
std::vector<std::string> prefix_maps(const CompileJob& job) {
  std::vector<std::string> out;
  for (const auto& p : job.unrecorded_prefixes) out.push_back("-ffile-prefix-map=" + p.string() + "/=");
  return out;
}

// Objects go into a shared library: position-independent, whatever the
// manifest says.
std::vector<std::string> with_pic(std::vector<std::string> flags) {
  if (std::find(flags.begin(), flags.end(), "-fPIC") == flags.end()) flags.push_back("-fPIC");
  return flags;
}

}  // namespace

std::string GnuToolchain::identity() const {
  // A cross compiler's objects are another machine's: the target enters the
  // key (x86_64's keys stay as they were).
  return "nvcc " + tools_.nvcc_version + " / " + tools_.compiler.id + " " + tools_.compiler.version +
         (tools_.arch == "x86_64" ? "" : " / " + tools_.arch);
}

std::vector<std::string> GnuToolchain::compile_command(const CompileJob& job) const {
  return job.kind == SourceKind::cuda ? nvcc_command(job) : cxx_command(job);
}

std::vector<std::string> GnuToolchain::nvcc_command(const CompileJob& job) const {
  std::vector<std::string> argv = {tools_.nvcc.string(), job.preprocess_only ? "-E" : "-c", job.source.string(),
                                   "-ccbin", tools_.cxx.string()};
  for (const auto& d : job.include_dirs) argv.push_back("-I" + d.string());
  for (const auto& d : job.system_include_dirs) argv.insert(argv.end(), {"-isystem", d.string()});
  argv.push_back(std_flag(job.standard));
  argv.insert(argv.end(), job.device_flags.begin(), job.device_flags.end());
  for (const auto& f : with_pic(job.host_flags)) argv.push_back("-Xcompiler=" + f);
  if (job.cxx11_abi) argv.push_back("-D_GLIBCXX_USE_CXX11_ABI=" + std::string(*job.cxx11_abi ? "1" : "0"));
  // nvcc preprocesses both sides with the host compiler and compiles the
  // host side with it: the map reaches every __FILE__ of the .cu file.
  for (const auto& m : prefix_maps(job)) argv.push_back("-Xcompiler=" + m);
  for (const auto& d : job.defines) argv.push_back("-D" + d);
  for (const auto& g : job.gencode) argv.insert(argv.end(), {"-gencode", g});
  for (auto& f : nvcc_thread_flags(job)) argv.push_back(std::move(f));
  argv.insert(argv.end(), {"-o", job.object.string()});
  return argv;
}

std::vector<std::string> GnuToolchain::cxx_command(const CompileJob& job) const {
  std::vector<std::string> argv = {tools_.cxx.string(), job.preprocess_only ? "-E" : "-c", job.source.string(),
                                   std_flag(job.standard)};
  for (const auto& f : with_pic(job.host_flags)) argv.push_back(f);
  if (job.cxx11_abi) argv.push_back("-D_GLIBCXX_USE_CXX11_ABI=" + std::string(*job.cxx11_abi ? "1" : "0"));
  for (const auto& d : job.defines) argv.push_back("-D" + d);
  // A shared object must not name the checkout or the torch that compiled
  // it (__FILE__ in torch's check and registration macros).
  for (auto& m : prefix_maps(job)) argv.push_back(std::move(m));
  for (const auto& d : job.include_dirs) argv.push_back("-I" + d.string());
  for (const auto& d : job.system_include_dirs) argv.push_back("-isystem" + d.string());
  argv.insert(argv.end(), {"-o", job.object.string()});
  return argv;
}

std::vector<std::string> GnuToolchain::link_command(const LinkJob& job) const {
  std::vector<std::string> argv = {tools_.cxx.string(), "-shared", "-o", job.output.string()};
  for (const auto& o : job.objects) argv.push_back(o.string());
  // libstdc++ first: torch's libraries export some std:: template instances
  // too, and whichever library comes first defines the reference; from
  // libstdc++ it carries its GLIBCXX_* version.
  argv.insert(argv.end(), {"-lstdc++", "-L" + job.torch_lib_dir.string(), "-Wl,--as-needed"});
  // Only the torch libraries the objects call end up in DT_NEEDED.  No
  // rpath: the extension finds them through torch, imported first.
  for (const auto& lib : job.torch_libs) argv.push_back("-l" + lib);
  argv.push_back("-Wl,--no-as-needed");
  argv.push_back("-L" + job.cuda_lib_dir.string());
  if (job.cudart_static)
    argv.insert(argv.end(), {"-l:libcudart_static.a", "-ldl", "-lrt", "-lpthread"});
  else
    argv.push_back("-lcudart");
  for (const auto& d : job.library_dirs) argv.push_back("-L" + d.string());
  for (const auto& lib : job.libraries) argv.push_back("-l" + lib);
  // No libpython: the interpreter provides its symbols when it loads us.
  // No local symbols: nvcc's host objects name their temporary source
  // (tmpxft_<pid>_...cudafe1.cpp) in an STT_FILE symbol, which would make
  // every build's extension differ; the dynamic linker never reads them.
  argv.push_back("-Wl,-x");
  return argv;
}

}  // namespace sb::toolchain
