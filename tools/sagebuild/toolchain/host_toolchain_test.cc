// The two host toolchains behind one interface: what both must do (one
// suite, run for each), then the command lines each writes, exactly.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_cmdline.h"
#include "sagebuild/toolchain/gnu_toolchain.h"
#include "sagebuild/toolchain/msvc_toolchain.h"

using namespace sb::toolchain;
using sb::wheel::AbiMode;
using Argv = std::vector<std::string>;

namespace {

const char* kMsvcBin =
    R"(C:\Program Files\Microsoft Visual Studio\2022\Enterprise\VC\Tools\MSVC\14.44.35207\bin\HostX64\x64)";

MsvcToolchain msvc(bool allow_unsupported = false) {
  std::string bin = kMsvcBin;
  return MsvcToolchain(MsvcTools{R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.9\bin\nvcc.exe)", "12.9.86",
                                 bin + R"(\cl.exe)", bin + R"(\link.exe)", "14.44.35207", allow_unsupported});
}

GnuToolchain gnu() { return GnuToolchain(GnuTools{"/cuda/bin/nvcc", "13.0.88", "/usr/bin/g++", {"gcc", "12.2.0"}}); }

std::shared_ptr<const HostToolchain> each_toolchain() {
  return GENERATE(as<std::shared_ptr<const HostToolchain>>{}, std::make_shared<GnuToolchain>(gnu()),
                  std::make_shared<MsvcToolchain>(msvc()));
}

bool has(const Argv& argv, const std::string& arg) { return std::find(argv.begin(), argv.end(), arg) != argv.end(); }

bool mentions(const Argv& argv, const std::string& text) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) { return a.find(text) != std::string::npos; });
}

// The argument right after `flag`, or "" when absent.
std::string after(const Argv& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it != argv.end() && it + 1 != argv.end() ? *(it + 1) : "";
}

CompileJob kernel_job() {
  CompileJob job;
  job.kind = SourceKind::cuda;
  job.source = "/src/kernels/quant.cu";
  job.object = "/cache/objects/.k.tmp";
  job.include_dirs = {"/src/kernels/include"};
  job.gencode = {"arch=compute_90a,code=sm_90a"};
  job.device_flags = {"-O3", "--use_fast_math"};
  job.host_flags = {"-fPIC"};
  return job;
}

LinkJob link_job() {
  LinkJob job;
  job.objects = {"/cache/objects/k.o", "/cache/objects/b.o"};
  job.output = "/work/rows/r/._C.tmp";
  job.torch_lib_dir = "/torch/lib";
  job.torch_libs = {"torch_cpu", "torch_cuda"};
  job.cuda_lib_dir = "/cuda/lib64";
  job.python_lib_dir = "/py/libs";
  return job;
}

}  // namespace

TEST_CASE("every host toolchain: compiles, links and renames what the plan asks, nothing else") {
  auto tc = each_toolchain();
  INFO(tc->platform_tag());
  Argv nvcc = tc->compile_command(kernel_job());
  CHECK(mentions(nvcc, "quant.cu"));
  CHECK(mentions(nvcc, ".k.tmp"));  // writes the temporary name
  CHECK(mentions(nvcc, "arch=compute_90a,code=sm_90a"));
  CHECK(mentions(nvcc, "--use_fast_math"));
  Argv link = tc->link_command(link_job());
  CHECK(mentions(link, "._C.tmp"));
  CHECK(mentions(link, "torch_cpu"));
  CHECK(mentions(link, "torch_cuda"));
  CHECK_FALSE(mentions(link, "c10"));  // only the libraries the job names
  CHECK_FALSE(mentions(link, "rpath"));
  std::string line = tc->run_then_move({"cc", "-o", "t"}, "/d/t", "/d/o");
  CHECK((line.find("mv -f") != std::string::npos || line.find("move /y") != std::string::npos));
  CHECK(tc->identity().find("nvcc ") == 0);
  CHECK(tc->extension_filename("_C", AbiMode::abi3, {3, 9}).rfind("_C.", 0) == 0);
  CHECK(tc->extension_filename("_C", AbiMode::per_interpreter, {3, 12}).find("312") != std::string::npos);
  CHECK_FALSE(tc->object_suffix().empty());
}

TEST_CASE("every host toolchain: static cudart is linked as the job asks") {
  auto tc = each_toolchain();
  LinkJob job = link_job();
  CHECK_FALSE(mentions(tc->link_command(job), "cudart_static"));
  job.cudart_static = true;
  CHECK(mentions(tc->link_command(job), "cudart_static"));
}

TEST_CASE("GNU: nvcc drives the host compiler, objects position-independent") {
  Argv argv = gnu().compile_command(kernel_job());
  CHECK(argv == Argv{"/cuda/bin/nvcc", "-c", "/src/kernels/quant.cu", "-ccbin", "/usr/bin/g++",
                     "-I/src/kernels/include", "-std=c++17", "-O3", "--use_fast_math", "-Xcompiler=-fPIC", "-gencode",
                     "arch=compute_90a,code=sm_90a", "-o", "/cache/objects/.k.tmp"});
  CompileJob none = kernel_job();
  none.host_flags.clear();
  CHECK(has(gnu().compile_command(none), "-Xcompiler=-fPIC"));  // added when the manifest lacks it
  CompileJob mapped = kernel_job();
  mapped.unrecorded_prefixes = {"/src"};
  CHECK(has(gnu().compile_command(mapped), "-Xcompiler=-ffile-prefix-map=/src/="));  // __FILE__ of the .cu
}

TEST_CASE("GNU: the binding gets torch's libstdc++ ABI, system headers and a relative __FILE__") {
  CompileJob job;
  job.source = "/src/kernels/binding/ops.cc";
  job.object = "/cache/objects/.b.tmp";
  job.standard = CxxStandard::cxx20;
  job.host_flags = {"-O2", "-fvisibility=hidden"};
  job.defines = {"TORCH_EXTENSION_NAME=_C"};
  job.system_include_dirs = {"/torch/include"};
  job.cxx11_abi = false;
  job.unrecorded_prefixes = {"/src", "/py/site-packages"};
  CHECK(gnu().compile_command(job) ==
        Argv{"/usr/bin/g++", "-c", "/src/kernels/binding/ops.cc", "-std=c++20", "-O2", "-fvisibility=hidden", "-fPIC",
             "-D_GLIBCXX_USE_CXX11_ABI=0", "-DTORCH_EXTENSION_NAME=_C", "-ffile-prefix-map=/src/=",
             "-ffile-prefix-map=/py/site-packages/=", "-isystem/torch/include", "-o", "/cache/objects/.b.tmp"});
}

TEST_CASE("GNU: the link, libstdc++ first, torch's libraries as needed, no libpython") {
  LinkJob job = link_job();
  job.cudart_static = true;
  CHECK(gnu().link_command(job) == Argv{"/usr/bin/g++", "-shared", "-o", "/work/rows/r/._C.tmp", "/cache/objects/k.o",
                                        "/cache/objects/b.o", "-lstdc++", "-L/torch/lib", "-Wl,--as-needed",
                                        "-ltorch_cpu", "-ltorch_cuda", "-Wl,--no-as-needed", "-L/cuda/lib64",
                                        "-l:libcudart_static.a", "-ldl", "-lrt", "-lpthread", "-Wl,-x"});
  CHECK(gnu().extension_filename("_C", AbiMode::abi3, {3, 9}) == "_C.abi3.so");
  CHECK(gnu().extension_filename("_C", AbiMode::per_interpreter, {3, 12}) == "_C.cpython-312-x86_64-linux-gnu.so");
  CHECK(gnu().extension_filename("_fused", AbiMode::per_interpreter, {3, 12}) ==
        "_fused.cpython-312-x86_64-linux-gnu.so");
  // Further libraries (upstream's -lcuda) come before the last flag (-Wl,-x), with their directories.
  job.libraries = {"cuda"};
  job.library_dirs = {"/cuda/lib64/stubs"};
  auto argv = gnu().link_command(job);
  CHECK(Argv(argv.end() - 3, argv.end()) == Argv{"-L/cuda/lib64/stubs", "-lcuda", "-Wl,-x"});
  CHECK(gnu().platform_tag() == "linux_x86_64");
  CHECK(gnu().identity() == "nvcc 13.0.88 / gcc 12.2.0");
}

TEST_CASE("MSVC: nvcc with -ccbin cl's directory, host flags one -Xcompiler each") {
  CompileJob job = kernel_job();
  job.source = R"(D:\a\sage attention\kernels\qk_int8.cu)";
  job.object = R"(D:\a\build\qk_int8.obj)";
  job.include_dirs = {R"(C:\py\Lib\site-packages\torch\include)"};
  job.defines = {"TORCH_EXTENSION_NAME=_C"};
  Argv argv = msvc().compile_command(job);
  CHECK(argv[0] == R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.9\bin\nvcc.exe)");
  CHECK(after(argv, "-ccbin") == kMsvcBin);
  CHECK(after(argv, "-o") == R"(D:\a\build\qk_int8.obj)");
  CHECK(has(argv, "-std=c++17"));
  CHECK_FALSE(has(argv, "-allow-unsupported-compiler"));
  for (const char* flag : {"/O2", "/MD", "/EHsc", "/Zc:preprocessor"}) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    REQUIRE(it != argv.end());
    CHECK(*(it - 1) == "-Xcompiler");
  }
  CHECK_FALSE(mentions(argv, "fPIC"));  // no meaning for a DLL
  CHECK(has(argv, "-gencode=arch=compute_90a,code=sm_90a"));
  CHECK(has(argv, R"(-IC:\py\Lib\site-packages\torch\include)"));
  CHECK(has(argv, "-DTORCH_EXTENSION_NAME=_C"));
  CHECK(sb::run::split_command_line(sb::run::join_command_line(argv)) == argv);
  CHECK(has(msvc(true).compile_command(job), "-allow-unsupported-compiler"));
  CHECK(msvc(true).identity() != msvc().identity());  // another object
}

TEST_CASE("MSVC: cl.exe compiles the binding with torch's runtime; untranslatable host flags are refused") {
  CompileJob job;
  job.source = R"(C:\src dir\binding.cpp)";
  job.object = R"(C:\out dir\binding.obj)";
  job.standard = CxxStandard::cxx20;
  job.host_flags = {"-O2", "-fPIC", "-fvisibility=hidden"};
  job.include_dirs = {R"(C:\src dir\include)"};
  job.system_include_dirs = {R"(C:\Program Files\Python312\Include)"};
  job.defines = {"Py_LIMITED_API=0x03090000"};
  job.cxx11_abi = true;                   // libstdc++'s: no meaning here
  job.unrecorded_prefixes = {"C:\\src"};  // MSVC has no documented equivalent: not passed
  CHECK(msvc().compile_command(job) == Argv{std::string(kMsvcBin) + R"(\cl.exe)", "/nologo", "/c",
                                            R"(C:\src dir\binding.cpp)", R"(/FoC:\out dir\binding.obj)", "/O2", "/MD",
                                            "/EHsc", "/std:c++20", "/Zc:preprocessor", R"(/IC:\src dir\include)",
                                            R"(/IC:\Program Files\Python312\Include)", "/DPy_LIMITED_API=0x03090000"});
  job.host_flags = {"-march=native"};
  job.flags_origin = "kernels/families.json";
  CHECK_THROWS_WITH(msvc().compile_command(job),
                    Catch::Contains("kernels/families.json") && Catch::Contains("-march=native"));
}

TEST_CASE("MSVC: link.exe, import libraries by full path, python3.lib for abi3, python3X.lib otherwise") {
  LinkJob job;
  job.objects = {R"(C:\b\qk.obj)", R"(C:\b\binding.obj)"};
  job.output = R"(C:\b\rows\r\._C.pyd.tmp)";
  job.torch_lib_dir = R"(C:\py\Lib\site-packages\torch\lib)";
  job.torch_libs = {"c10", "torch_cpu"};
  job.cuda_lib_dir = R"(C:\CUDA\v12.9\lib\x64)";
  job.python_lib_dir = R"(C:\py\libs)";
  CHECK(msvc().link_command(job) == Argv{std::string(kMsvcBin) + R"(\link.exe)", "/nologo", "/DLL", "/NOIMPLIB",
                                         "/NOEXP", R"(/OUT:C:\b\rows\r\._C.pyd.tmp)", R"(C:\b\qk.obj)",
                                         R"(C:\b\binding.obj)", R"(C:\py\Lib\site-packages\torch\lib\c10.lib)",
                                         R"(C:\py\Lib\site-packages\torch\lib\torch_cpu.lib)",
                                         R"(C:\CUDA\v12.9\lib\x64\cudart.lib)", R"(C:\py\libs\python3.lib)"});
  job.abi = AbiMode::per_interpreter;
  job.python = {3, 13};
  CHECK(msvc().link_command(job).back() == R"(C:\py\libs\python313.lib)");
  CHECK(msvc().extension_filename("_C", AbiMode::abi3, {3, 9}) == "_C.pyd");
  CHECK(msvc().extension_filename("_C", AbiMode::per_interpreter, {3, 12}) == "_C.cp312-win_amd64.pyd");
  CHECK(msvc().platform_tag() == "win_amd64");
  CHECK(msvc().object_suffix() == ".obj");
}

TEST_CASE("MSVC: the rename is cmd.exe's move, with Windows paths") {
  std::string line = msvc().run_then_move({"cl.exe", "/c"}, "C:/o/.x.tmp.obj", "C:/o/x.obj");
  CHECK(line == R"(cmd.exe /d /s /c ""cl.exe" /c && move /y C:\o\.x.tmp.obj C:\o\x.obj >nul")");
}

TEST_CASE("nvcc threads: a unit's archs side by side, up to the threads it may use") {
  CompileJob job = kernel_job();
  job.device_threads = 16;
  CHECK(nvcc_thread_flags(job).empty());  // one arch: nothing to put side by side
  job.gencode = {"arch=compute_80,code=sm_80", "arch=compute_86,code=sm_86", "arch=compute_89,code=sm_89",
                 "arch=compute_90,code=sm_90", "arch=compute_120,code=[sm_120,compute_120]"};
  CHECK(nvcc_thread_flags(job) == Argv{"--threads=5"});
  job.device_threads = 2;  // the 2-core machine
  CHECK(nvcc_thread_flags(job) == Argv{"--threads=2"});
  CHECK(has(gnu().compile_command(job), "--threads=2"));
  CHECK(has(msvc().compile_command(job), "--threads=2"));
  job.device_threads = 1;  // --nvcc-threads 1: nvcc as it always ran
  CHECK(nvcc_thread_flags(job).empty());
  CompileJob binding = job;
  binding.device_threads = 16;
  binding.kind = SourceKind::cxx;  // the host compiler takes no such option
  CHECK(nvcc_thread_flags(binding).empty());
}
