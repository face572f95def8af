#include <catch2/catch.hpp>

#include <memory>

#include "sagebuild/platform/gnu_toolchain.h"
#include "sagebuild/platform/msvc_toolchain.h"

using namespace sb::platform;
using Argv = std::vector<std::string>;

TEST_CASE("GnuToolchain: nvcc with -ccbin and -fPIC, g++ -shared link") {
  GnuToolchain tc({"/usr/local/cuda-12.9/bin/nvcc", "/usr/bin/g++-13", "x86_64"});
  CompileJob job;
  job.kind = SourceKind::Cuda;
  job.source = "kernels/qk.cu";
  job.object = "build/qk.o";
  job.cuda_gencode = {"arch=compute_89,code=sm_89"};
  job.defines = {"_GLIBCXX_USE_CXX11_ABI=1"};
  CHECK(tc.compile_command(job) ==
        Argv{"/usr/local/cuda-12.9/bin/nvcc", "-c", "kernels/qk.cu", "-o", "build/qk.o", "-ccbin",
             "/usr/bin/g++-13", "-std=c++17", "-Xcompiler", "-fPIC",
             "-gencode=arch=compute_89,code=sm_89", "-D_GLIBCXX_USE_CXX11_ABI=1"});

  LinkJob link;
  link.objects = {"build/qk.o"};
  link.output_dir = "stage/sageattention";
  link.torch_lib_dir = "/venv/lib/python3.12/site-packages/torch/lib";
  link.cuda_lib_dir = "/usr/local/cuda-12.9/lib64";
  CHECK(tc.link_command(link) ==
        Argv{"/usr/bin/g++-13", "-shared", "-o", "stage/sageattention/_C.abi3.so", "build/qk.o",
             "-L/venv/lib/python3.12/site-packages/torch/lib", "-lc10", "-ltorch", "-ltorch_cpu",
             "-ltorch_cuda", "-lc10_cuda", "-L/usr/local/cuda-12.9/lib64", "-lcudart"});
  link.cudart_static = true;
  Argv static_link = tc.link_command(link);
  CHECK(Argv(static_link.end() - 4, static_link.end()) == Argv{"-l:libcudart_static.a", "-ldl", "-lrt", "-lpthread"});
}

TEST_CASE("one interface, a file name and tag per platform") {
  std::vector<std::unique_ptr<HostToolchain>> toolchains;
  toolchains.push_back(std::make_unique<GnuToolchain>(GnuTools{"nvcc", "g++", "aarch64"}));
  toolchains.push_back(std::make_unique<MsvcToolchain>(MsvcTools{"nvcc.exe", "cl.exe", "link.exe"}));
  PythonVersion py{3, 12};
  CHECK(toolchains[0]->platform_tag() == "linux_aarch64");
  CHECK(toolchains[0]->extension_filename(AbiMode::PerInterpreter, py) ==
        "_C.cpython-312-aarch64-linux-gnu.so");
  CHECK(toolchains[0]->extension_filename(AbiMode::Abi3, py) == "_C.abi3.so");
  CHECK(toolchains[1]->extension_filename(AbiMode::PerInterpreter, py) == "_C.cp312-win_amd64.pyd");
}
