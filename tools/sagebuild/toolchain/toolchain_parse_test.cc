// Parsing what the real tools print and the files real installs contain.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sagebuild/common/os.h"

#include <filesystem>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/host_compiler.h"
#include "sagebuild/toolchain/python_env.h"
#include "sagebuild/toolchain/torch.h"

using namespace sb::toolchain;

// Verbatim `nvcc --version` of CUDA 13.0.88 and 12.8.93.
static const char* kNvcc130 =
    "nvcc: NVIDIA (R) Cuda compiler driver\n"
    "Copyright (c) 2005-2025 NVIDIA Corporation\n"
    "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\n"
    "Cuda compilation tools, release 13.0, V13.0.88\n"
    "Build cuda_13.0.r13.0/compiler.36424714_0\n";
static const char* kNvcc128 =
    "nvcc: NVIDIA (R) Cuda compiler driver\n"
    "Copyright (c) 2005-2025 NVIDIA Corporation\n"
    "Built on Fri_Feb_21_20:23:50_PST_2025\n"
    "Cuda compilation tools, release 12.8, V12.8.93\n"
    "Build cuda_12.8.r12.8/compiler.35583870_0\n";

TEST_CASE("nvcc --version text is parsed") {
  auto v = parse_nvcc_version(kNvcc130);
  REQUIRE(v);
  CHECK(v->full_str() == "13.0.88");
  CHECK(v->release_str() == "13.0");
  CHECK(*v == CudaVersion{13, 0, 88});
  CHECK(v->release() == CudaVersion{13, 0, 0});
  auto w = parse_nvcc_version(kNvcc128);
  REQUIRE(w);
  CHECK(w->full_str() == "12.8.93");
  CHECK_FALSE(parse_nvcc_version("gcc (Debian 12.2.0) 12.2.0"));
  CHECK_FALSE(parse_nvcc_version("Cuda compilation tools, release 13.0, V12.8.93"));  // inconsistent
}

TEST_CASE("the real nvcc answers with its version", "[posix]") {
  std::filesystem::path nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc)) {
    WARN("no nvcc at /usr/local/cuda: real-nvcc check not run here");
    return;
  }
  sb::run::HostProcessRunner r;
  auto v = query_nvcc(r, nvcc);
  CHECK(v.major >= 12);
  CudaSearch s;
  s.cuda_home_flag = std::filesystem::path("/usr/local/cuda");
  auto found = find_cuda(r, s, v.release());
  REQUIRE(found.toolkit);
  CHECK(found.toolkit->origin == "--cuda-home");
  auto wrong = find_cuda(r, s, CudaVersion{11, 8});
  CHECK_FALSE(wrong.toolkit);
  REQUIRE(wrong.candidates.size() == 1);  // --cuda-home is a demand: nothing else is tried
  CHECK(wrong.candidates[0].problem.find("the row needs CUDA 11.8") != std::string::npos);
}

TEST_CASE("CUDA wheel names per major") {
  CHECK(cuda_wheel_names(CudaVersion{13, 0}).front() == "nvidia-cuda-nvcc");
  // PyPI's CUDA 12 nvcc wheels have ptxas and libNVVM but no nvcc driver: not provisionable.
  CHECK(cuda_provision_blocker(CudaVersion{13, 0}).empty());
  CHECK(cuda_provision_blocker(CudaVersion{12, 8}).find("PyPI has no nvcc for CUDA 12.8") != std::string::npos);
  CHECK_THROWS_WITH((cuda_wheel_names(CudaVersion{12, 8})), Catch::Contains("pass --cuda-home"));
  CHECK_THROWS_AS((cuda_wheel_names(CudaVersion{11, 8})), sb::UsageError);
}

TEST_CASE("the CUDA wheels pip downloads: the five CUDA 13 distributions, each pinned to the row's release") {
  // One list for Linux and Windows: NVIDIA publishes the same names for both
  // (win_amd64 13.0 wheels: nvidia-cuda-nvcc 13.0.88 with nvcc.exe, nvidia-nvvm
  // with cicc.exe, nvidia-cuda-crt, nvidia-cuda-runtime 13.0.96 with cudart.lib,
  // nvidia-cuda-cccl 13.0.85), so a row's toolkit is the same release on both.
  CHECK(cuda_wheel_requirements(CudaVersion{13, 0}) ==
        std::vector<std::string>{"nvidia-cuda-nvcc==13.0.*", "nvidia-cuda-runtime==13.0.*", "nvidia-cuda-cccl==13.0.*",
                                 "nvidia-cuda-crt==13.0.*", "nvidia-nvvm==13.0.*"});
  CHECK(cuda_wheel_requirements(CudaVersion{13, 2}).back() == "nvidia-nvvm==13.2.*");
  CHECK_THROWS_WITH((cuda_wheel_requirements(CudaVersion{12, 8})), Catch::Contains("PyPI has no nvcc for CUDA 12.8"));
}

TEST_CASE("the files of a CUDA home each platform's nvcc and link look for") {
  auto has = [](const std::vector<std::string>& files, const std::string& f) {
    return std::find(files.begin(), files.end(), f) != files.end();
  };
  auto win = cuda_home_files("win_amd64");
  // nvcc.exe's nvcc.profile (the win_amd64 wheel's): CICC_PATH $(TOP)/nvvm/bin,
  // NVVMIR_LIBRARY_DIR $(TOP)/nvvm/libdevice, -I$(TOP)/include and
  // $(TOP)/include/cccl, /LIBPATH:$(TOP)/lib/x64.  No targets/ tree, no symlink.
  for (const char* f :
       {"bin/nvcc.exe", "bin/nvcc.profile", "bin/ptxas.exe", "bin/cudafe++.exe", "bin/fatbinary.exe", "bin/nvlink.exe",
        "nvvm/bin/cicc.exe", "nvvm/libdevice/libdevice.10.bc", "include/cuda_runtime.h", "include/crt/host_config.h",
        "include/cccl/cuda/std/cstdint", "include/cccl/cub/cub.cuh", "include/cccl/thrust/version.h",
        "lib/x64/cudart_static.lib", "lib/x64/cudart.lib", "lib/x64/cuda.lib"})
    CHECK(has(win, f));
  for (const auto& f : win) CHECK(f.find("targets/") == std::string::npos);
  auto lin = cuda_home_files("linux_x86_64");
  for (const char* f : {"bin/nvcc", "bin/ptxas", "bin/cudafe++", "bin/fatbinary", "bin/nvlink", "nvvm/bin/cicc",
                        "targets/x86_64-linux/include/cuda_runtime.h",
                        "targets/x86_64-linux/include/cccl/cuda/std/cstdint", "lib64/libcudart_static.a"})
    CHECK(has(lin, f));
  for (const auto& f : lin) CHECK(f.find(".exe") == std::string::npos);
  CHECK(win.size() == lin.size());  // the same pieces, laid out per platform
  CHECK(cuda_home_files("linux_aarch64").empty());
  CHECK(cuda_home_files("macosx_11_0_arm64").empty());
}

TEST_CASE("which CUDA versions sagebuild provisions from PyPI, as the workflow is told") {
  CHECK(cuda_provisioned_from_pypi(CudaVersion{13, 0}, "linux_x86_64"));
  CHECK(cuda_provisioned_from_pypi(CudaVersion{13, 2}, "linux_x86_64"));
  CHECK_FALSE(cuda_provisioned_from_pypi(CudaVersion{12, 4}, "linux_x86_64"));
  CHECK_FALSE(cuda_provisioned_from_pypi(CudaVersion{12, 9}, "linux_x86_64"));
  CHECK_FALSE(cuda_provisioned_from_pypi(CudaVersion{11, 8}, "linux_x86_64"));
  // Windows as Linux: CUDA 13 from NVIDIA's win_amd64 wheels; CUDA 12 (PyPI
  // has no nvcc.exe for it) keeps NVIDIA's installer.
  CHECK(cuda_provisioned_from_pypi(CudaVersion{13, 0}, "win_amd64"));
  CHECK(cuda_provisioned_from_pypi(CudaVersion{13, 2}, "win_amd64"));
  for (CudaVersion v : {CudaVersion{12, 4}, CudaVersion{12, 6}, CudaVersion{12, 8}, CudaVersion{12, 9}})
    CHECK_FALSE(cuda_provisioned_from_pypi(v, "win_amd64"));
  // No CUDA home is laid out for another platform (an aarch64 one would need
  // targets/sbsa-linux): its rows install the toolkit.
  CHECK_FALSE(cuda_provisioned_from_pypi(CudaVersion{13, 0}, "linux_aarch64"));
  // The same rule as the build's: provisioned exactly where nothing blocks it.
  for (CudaVersion v : {CudaVersion{11, 8}, CudaVersion{12, 4}, CudaVersion{12, 6}, CudaVersion{12, 8},
                        CudaVersion{12, 9}, CudaVersion{13, 0}, CudaVersion{13, 2}})
    for (const char* platform : {"linux_x86_64", "win_amd64"})
      CHECK(cuda_provisioned_from_pypi(v, platform) == cuda_provision_blocker(v).empty());
}

// torch/version.py of the torch 2.11.0 manylinux_2_28 wheel.
static const char* kVersionPy =
    "from typing import Optional\n\n"
    "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n"
    "__version__ = '2.11.0+cu130'\n"
    "debug = False\n"
    "cuda: Optional[str] = '13.0'\n"
    "git_version = '70d99e998b4955e0049d13a98d77ae1b14db1f45'\n"
    "hip: Optional[str] = None\n";

TEST_CASE("torch/version.py fields") {
  CHECK(parse_version_py(kVersionPy, "__version__") == "2.11.0+cu130");
  CHECK(parse_version_py(kVersionPy, "cuda") == "13.0");
  CHECK_FALSE(parse_version_py(kVersionPy, "hip"));   // None
  CHECK_FALSE(parse_version_py(kVersionPy, "rocm"));  // absent
  CHECK(parse_version_py("cuda = \"12.8\"\n", "cuda") == "12.8");
}

TEST_CASE("the C++ ABI from cmake files or library symbols") {
  // torch 2.5's TorchConfig.cmake line.
  CHECK(parse_cmake_cxx11_abi("  set(TORCH_CXX_FLAGS \"-D_GLIBCXX_USE_CXX11_ABI=0\")") == false);
  CHECK(parse_cmake_cxx11_abi("set(TORCH_CXX_FLAGS \"-D_GLIBCXX_USE_CXX11_ABI=1\")") == true);
  CHECK_FALSE(parse_cmake_cxx11_abi("if(TORCH_CXX_FLAGS)\n"));
  CHECK(cxx11_abi_from_library_bytes(std::string(
            "..._ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\0", 96)) ==
        true);
  CHECK(cxx11_abi_from_library_bytes(
            "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs NSt12basic_stringIcSt11char_traitsIcESaIcEE") == false);
  CHECK_FALSE(cxx11_abi_from_library_bytes("no strings here"));
}

TEST_CASE("a torch directory is read from its own files") {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / ("sb-build-torchdir-" + std::to_string(sb::process_id()));
  fs::remove_all(d);
  CHECK_THROWS_WITH(read_torch_dir(d), Catch::Contains("no version.py"));
  fs::create_directories(d / "include/torch");
  fs::create_directories(d / "lib");
  sb::write_file_atomic(d / "version.py", kVersionPy);
  CHECK_THROWS_WITH(read_torch_dir(d), Catch::Contains("library.h"));
  sb::write_file_atomic(d / "include/torch/library.h", "// header\n");
  sb::write_file_atomic(d / "lib/libc10.so", "xx NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE xx");
  auto t = read_torch_dir(d);
  CHECK(t.version == "2.11.0+cu130");
  CHECK(t.public_version() == "2.11.0");
  CHECK(t.cuda == "13.0");
  CHECK(t.cxx11_abi);
  CHECK(t.abi_source == "lib/libc10.so symbols");
  fs::remove_all(d);
}

TEST_CASE("host compiler versions") {
  auto g = parse_compiler_version("c++ (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright...");
  REQUIRE(g);
  CHECK(g->id == "gcc");
  CHECK(g->version() == "12.2.0");
  auto g2 = parse_compiler_version("g++ (GCC) 11.4.1 20231218 (Red Hat 11.4.1-3)");
  REQUIRE(g2);
  CHECK(g2->major == 11);
  auto c = parse_compiler_version("Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu");
  REQUIRE(c);
  CHECK(c->id == "clang");
  CHECK(c->major == 14);
  auto u = parse_compiler_version("Ubuntu clang version 18.1.3 (1ubuntu1)");
  REQUIRE(u);
  CHECK(u->version() == "18.1.3");
  CHECK_FALSE(parse_compiler_version("icpx (R) oneAPI DPC++/C++ Compiler 2024.0.0"));
}

TEST_CASE("host compiler ranges per CUDA") {
  auto r = supported_range(CudaVersion{13, 0}, "gcc");
  REQUIRE(r);
  CHECK(check_range(CompilerId{"gcc", 12, 2, 0}, *r, CudaVersion{13, 0}).empty());
  CHECK(check_range(CompilerId{"gcc", 15, 1, 0}, *r, CudaVersion{13, 0}).empty());
  auto msg = check_range(CompilerId{"gcc", 16, 0, 0}, *r, CudaVersion{13, 0});
  CHECK(msg.find("not supported by CUDA 13.0") != std::string::npos);
  CHECK(msg.find("(supported: gcc up to 15, per crt/host_config.h of nvidia-cuda-crt 13.0.88)") != std::string::npos);
  CHECK(msg.find("--host-compiler") != std::string::npos);
  CHECK_FALSE(check_range(CompilerId{"gcc", 14, 0, 0}, *supported_range(CudaVersion{12, 6}, "gcc"), CudaVersion{12, 6})
                  .empty());
  CHECK(check_range(CompilerId{"clang", 20, 0, 0}, *supported_range(CudaVersion{13, 0}, "clang"), CudaVersion{13, 0})
            .empty());
  CHECK_FALSE(
      check_range(CompilerId{"clang", 21, 0, 0}, *supported_range(CudaVersion{13, 0}, "clang"), CudaVersion{13, 0})
          .empty());
  auto old_clang =
      check_range(CompilerId{"clang", 2, 9, 0}, *supported_range(CudaVersion{13, 0}, "clang"), CudaVersion{13, 0});
  CHECK(old_clang.find("(supported: clang 3 to 20,") != std::string::npos);
  CHECK_FALSE(supported_range(CudaVersion{9, 2}, "gcc"));
}

TEST_CASE("host compiler ranges are what each release's host_config.h enforces") {
  // {cuda, gcc max, clang max}, read from crt/host_config.h of the NVIDIA
  // wheels named in host_compiler.cc.  No release checks a gcc minimum; all
  // reject clang before 3.3.
  struct Want {
    CudaVersion cuda;
    int gcc_max, clang_max;
  };
  for (const Want& w : {Want{{11, 8}, 11, 14}, Want{{12, 4}, 13, 17}, Want{{12, 6}, 13, 18}, Want{{12, 8}, 14, 19},
                        Want{{12, 9}, 14, 19}, Want{{13, 0}, 15, 20}, Want{{13, 2}, 15, 21}}) {
    INFO("CUDA " << w.cuda.release_str());
    auto gcc = supported_range(w.cuda, "gcc");
    auto clang = supported_range(w.cuda, "clang");
    REQUIRE(gcc);
    REQUIRE(clang);
    CHECK(gcc->max_major == w.gcc_max);
    CHECK(gcc->min_major == 0);
    CHECK(clang->max_major == w.clang_max);
    CHECK(clang->min_major == 3);
    CHECK(gcc->source.find("crt/host_config.h of nvidia-cuda-") == 0);
    CHECK(gcc->source.find(std::string(" ") + w.cuda.release_str() + ".") != std::string::npos);  // the wheel's version
    CHECK(check_range(CompilerId{"gcc", w.gcc_max, 9, 0}, *gcc, w.cuda).empty());
    CHECK_FALSE(check_range(CompilerId{"gcc", w.gcc_max + 1, 0, 0}, *gcc, w.cuda).empty());
    CHECK(check_range(CompilerId{"gcc", 5, 4, 0}, *gcc, w.cuda).empty());
    CHECK(check_range(CompilerId{"clang", w.clang_max, 0, 0}, *clang, w.cuda).empty());
    CHECK_FALSE(check_range(CompilerId{"clang", w.clang_max + 1, 0, 0}, *clang, w.cuda).empty());
  }
  CHECK_FALSE(supported_range(CudaVersion{13, 0}, "msvc"));  // MSVC's range is not this table's (see host_compiler.cc)
}

TEST_CASE("every CUDA of the build matrix has a host compiler range") {
  auto m = sb::matrix::load_matrix(std::filesystem::path(SAGEBUILD_SOURCE_DIR) / "matrix/build-matrix.yaml");
  REQUIRE_FALSE(m.cuda.empty());
  for (const auto& c : m.cuda) {
    INFO("CUDA " << c.version.release_str() << " (matrix/build-matrix.yaml)");
    CHECK(supported_range(c.version, "gcc"));
    CHECK(supported_range(c.version, "clang"));
  }
}

TEST_CASE("the toolkit's own host_config.h gives the enforced maximum", "[posix]") {
  std::string text =
      "#if defined(__GNUC__)\n#if __GNUC__ > 15\n#error -- unsupported GNU version!\n#endif\n"
      "#if (__clang_major__ >= 21) || (__clang_major__ < 3)\n#error -- unsupported clang\n#endif\n";
  CHECK(max_major_from_host_config(text, "gcc") == 15);
  CHECK(max_major_from_host_config(text, "clang") == 20);
  // The layout of the 12.x and 13.x headers: a check for HOS clang comes
  // before the generic one; the generic one is the range (numbers changed here
  // so that picking the first would show).
  std::string layered =
      "#if defined(__GNUC__)\n\n#if __GNUC__ > 14\n\n#error -- unsupported GNU version!\n\n#endif\n\n"
      "#if defined(__HORIZON__)\n"
      "#if (__clang_major__ >= 18) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))\n"
      "#error -- unsupported HOS clang version!\n#endif\n#endif /* __HORIZON__  */\n\n"
      "#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && "
      "!defined(__APPLE__) && !defined(__GRCO_CLANG_COMPILER__)\n\n"
      "#if (__clang_major__ >= 20) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))\n"
      "#error -- unsupported clang version!\n";
  CHECK(max_major_from_host_config(layered, "gcc") == 14);
  CHECK(max_major_from_host_config(layered, "clang") == 19);
  CHECK_FALSE(max_major_from_host_config("#define X 1\n", "gcc"));
  std::filesystem::path real = "/usr/local/cuda/include/crt/host_config.h";
  if (std::filesystem::exists(real)) {
    // The table agrees with the toolkit installed here.
    sb::run::HostProcessRunner runner;
    auto v = query_nvcc(runner, "/usr/local/cuda/bin/nvcc");
    for (const char* id : {"gcc", "clang"}) {
      auto range = supported_range(v.release(), id);
      if (range) CHECK(max_major_from_host_config(sb::read_file(real), id) == range->max_major);
    }
  }
}

TEST_CASE("the Python query's answer") {
  auto p = parse_python_query(
      "noise from sitecustomize\n"
      "{\"version\": [3, 12], \"include\": \"/usr/include/python3.12\", \"ext_suffix\": "
      "\".cpython-312-x86_64-linux-gnu.so\", \"has_headers\": true, \"torch\": {\"version\": "
      "\"2.11.0+cu130\", \"cuda\": \"13.0\", \"cxx11_abi\": true, \"dir\": \"/x/torch\"}}\n",
      "/usr/bin/python3");
  CHECK(p.version() == "3.12");
  CHECK(p.ext_suffix == ".cpython-312-x86_64-linux-gnu.so");
  REQUIRE(p.torch);
  CHECK(p.torch->cuda == "13.0");
  CHECK_THROWS_AS(parse_python_query("{\"version\": 3}", "py"), sb::UsageError);
}

TEST_CASE("the real python3 answers the query") {
  auto py = sb::run::find_program("python3");
  if (!py) {
    WARN("no python3 on PATH");
    return;
  }
  sb::run::HostProcessRunner r;
  auto info = query_python(r, *py);
  CHECK(info.major == 3);
  CHECK(info.ext_suffix.find(".so") != std::string::npos);
}

TEST_CASE("an installed torch's release comes from its version.py's version") {
  TorchInstall t;
  t.version = "2.11.0+cu130";
  CHECK(t.public_version() == "2.11.0");
  CHECK(t.release() == sb::matrix::TorchVersion{2, 11, 0, true});
  t.version = "2.12.0a0+gitabc";
  CHECK_FALSE(t.release());
}
