#include <catch2/catch.hpp>

#include <algorithm>

#include "sagebuild/toolchain/msvc_toolchain.h"
#include "sagebuild/run/win_cmdline.h"

using namespace sb::toolchain;
using Argv = std::vector<std::string>;

namespace {

const char* kMsvcBin =
    "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Tools\\MSVC\\14.44.35207\\"
    "bin\\HostX64\\x64";

MsvcToolchain make_toolchain(bool allow_unsupported = false) {
  std::string bin = kMsvcBin;
  return MsvcToolchain(MsvcTools{
      "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.9\\bin\\nvcc.exe",
      bin + "\\cl.exe", bin + "\\link.exe", allow_unsupported});
}

bool has(const Argv& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

// The argument right after `flag`, or "" when absent.
std::string after(const Argv& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it != argv.end() && it + 1 != argv.end() ? *(it + 1) : "";
}

}  // namespace

TEST_CASE("nvcc on Windows: -ccbin cl's directory, host flags through -Xcompiler") {
  CompileJob job;
  job.source = "D:\\a\\sage attention\\kernels\\qk_int8.cu";
  job.object = "D:\\a\\build\\qk_int8.obj";
  job.kind = SourceKind::Cuda;
  job.cuda_gencode = {"arch=compute_90a,code=sm_90a"};
  job.include_dirs = {"C:\\py\\Lib\\site-packages\\torch\\include"};
  job.defines = {"TORCH_EXTENSION_NAME=_C"};
  Argv argv = make_toolchain().compile_command(job);
  CHECK(argv[0] == "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.9\\bin\\nvcc.exe");
  CHECK(after(argv, "-ccbin") == kMsvcBin);
  CHECK(after(argv, "-o") == "D:\\a\\build\\qk_int8.obj");
  CHECK(has(argv, "-std=c++17"));
  CHECK_FALSE(has(argv, "-allow-unsupported-compiler"));
  // Every host flag pairs with its own -Xcompiler.
  for (const char* flag : {"/O2", "/MD", "/EHsc", "/Zc:preprocessor"}) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    REQUIRE(it != argv.end());
    CHECK(*(it - 1) == "-Xcompiler");
  }
  CHECK(has(argv, "-gencode=arch=compute_90a,code=sm_90a"));
  CHECK(has(argv, "-IC:\\py\\Lib\\site-packages\\torch\\include"));
  CHECK(has(argv, "-DTORCH_EXTENSION_NAME=_C"));
  // The command line CreateProcess gets splits back to the same argv.
  CHECK(split_command_line(join_command_line(argv)) == argv);
}

TEST_CASE("nvcc gets -allow-unsupported-compiler only when the row asks") {
  CompileJob job;
  job.kind = SourceKind::Cuda;
  job.source = "a.cu";
  job.object = "a.obj";
  job.standard = CxxStandard::Cxx20;
  Argv argv = make_toolchain(true).compile_command(job);
  CHECK(has(argv, "-allow-unsupported-compiler"));
  CHECK(has(argv, "-std=c++20"));
  CHECK_FALSE(has(argv, "/std:c++20"));  // nvcc passes the standard to cl itself
}

TEST_CASE("cl.exe compiles bindings with the same runtime and standard") {
  CompileJob job;
  job.source = "C:\\src dir\\binding.cpp";
  job.object = "C:\\out dir\\binding.obj";
  job.standard = CxxStandard::Cxx20;
  job.include_dirs = {"C:\\Program Files\\Python312\\Include"};
  job.defines = {"Py_LIMITED_API=0x03090000"};
  Argv argv = make_toolchain().compile_command(job);
  CHECK(argv ==
        Argv{std::string(kMsvcBin) + "\\cl.exe", "/nologo", "/c", "C:\\src dir\\binding.cpp",
             "/FoC:\\out dir\\binding.obj", "/O2", "/MD", "/EHsc", "/std:c++20",
             "/Zc:preprocessor", "/IC:\\Program Files\\Python312\\Include",
             "/DPy_LIMITED_API=0x03090000"});
  std::string line = join_command_line(argv);
  CHECK(line.find("\"/FoC:\\out dir\\binding.obj\"") != std::string::npos);
}

TEST_CASE("link.exe: /DLL, torch and cudart import libraries, python3.lib for abi3") {
  LinkJob job;
  job.objects = {"C:\\b\\qk.obj", "C:\\b\\binding.obj"};
  job.output_dir = "C:\\b\\stage\\sageattention\\";
  job.torch_lib_dir = "C:\\Program Files\\Python312\\Lib\\site-packages\\torch\\lib";
  job.cuda_lib_dir = windows_cudart_lib_dir(std::nullopt,
                                            "C:\\Program Files\\Python312\\Lib\\site-packages");
  job.python_lib_dir = "C:\\Program Files\\Python312\\libs";
  Argv argv = make_toolchain().link_command(job);
  std::string torch = job.torch_lib_dir + "\\";
  CHECK(argv == Argv{std::string(kMsvcBin) + "\\link.exe", "/nologo", "/DLL",
                     "/OUT:C:\\b\\stage\\sageattention\\_C.pyd", "C:\\b\\qk.obj",
                     "C:\\b\\binding.obj", torch + "c10.lib", torch + "torch.lib",
                     torch + "torch_cpu.lib", torch + "torch_cuda.lib", torch + "c10_cuda.lib",
                     "C:\\Program Files\\Python312\\Lib\\site-packages\\nvidia\\cuda_runtime\\lib"
                     "\\x64\\cudart.lib",
                     "C:\\Program Files\\Python312\\libs\\python3.lib"});

  job.cudart_static = true;
  argv = make_toolchain().link_command(job);
  CHECK(argv[argv.size() - 2] ==
        "C:\\Program Files\\Python312\\Lib\\site-packages\\nvidia\\cuda_runtime\\lib\\x64\\cudart_static.lib");

  job.abi = AbiMode::PerInterpreter;
  job.python = {3, 13};
  argv = make_toolchain().link_command(job);
  CHECK(argv[3] == "/OUT:C:\\b\\stage\\sageattention\\_C.cp313-win_amd64.pyd");
  CHECK(argv.back() == "C:\\Program Files\\Python312\\libs\\python313.lib");
}

TEST_CASE("Windows extension names and tag") {
  auto tc = make_toolchain();
  CHECK(tc.platform_tag() == "win_amd64");
  CHECK(tc.extension_filename(AbiMode::Abi3, {3, 9}) == "_C.pyd");
  CHECK(tc.extension_filename(AbiMode::PerInterpreter, {3, 12}) == "_C.cp312-win_amd64.pyd");
}

TEST_CASE("cudart.lib comes from CUDA_PATH when a toolkit is installed") {
  CHECK(windows_cudart_lib_dir(std::string("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.0"),
                               "C:\\site") ==
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.0\\lib\\x64");
  CHECK(windows_cudart_lib_dir(std::string(), "C:\\site") ==
        "C:\\site\\nvidia\\cuda_runtime\\lib\\x64");
}
