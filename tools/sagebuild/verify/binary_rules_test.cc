#include <catch2/catch.hpp>

#include <set>

#include "sagebuild/verify/binary_rules.h"

using namespace sb;
using namespace sb::verify;

namespace {
std::multiset<std::string> rules(const Findings& f) {
  std::multiset<std::string> r;
  for (const auto& x : f) r.insert(x.rule);
  return r;
}
const PolicyTable& policies() { return PolicyTable::embedded(); }
BinaryFacts ext() {
  return {"sageattention/_C.abi3.so",
          "x86_64",
          {"libc.so.6", "libtorch.so", "libc10.so", "libcudart.so.13", "libstdc++.so.6"},
          {"$ORIGIN/../torch/lib"},
          {{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.17"}},
           {"libstdc++.so.6", {"GLIBCXX_3.4.19", "CXXABI_1.3.5"}},
           {"libcudart.so.13", {"libcudart.so.13"}}},
          {{"_ZN2at6TensorC1Ev", "", false},
           {"_ZNK3c1010TensorImpl5sizesEv", "", false},
           {"cudaLaunchKernel", "libcudart.so.13", false},
           {"memcpy", "GLIBC_2.14", false},
           {"PyLong_FromLong", "", false},
           {"__gmon_start__", "", true}}};
}
distinfo::BuildInfo info() {
  distinfo::BuildInfo b;
  b.abi_mode = sb::wheel::AbiMode::abi3;
  b.torch = {"2.11.0", true, "13.0"};
  b.cuda = {"13.0", "13.0.88"};
  b.archs = {"8.0", "8.9", "9.0", "12.0"};
  b.kernel_families = {{"quant", {"8.0", "quant_kernel"}}, {"pv_fp8", {"8.9", "pv_fp8_kernel"}}};
  return b;
}
}  // namespace

TEST_CASE("policy table: the built-in levels, aliases, arch and set membership") {
  REQUIRE(policies().size() == 16);  // manylinux_2_5 ... manylinux_2_41
  CHECK(policies().archs() == std::set<std::string>{"aarch64", "x86_64"});
  auto x86 = policies().levels("x86_64");
  REQUIRE(x86.size() == 16);
  CHECK(x86.front()->name == "manylinux_2_5");
  CHECK(x86.back()->name == "manylinux_2_41");
  CHECK(policies().levels("aarch64").front()->name == "manylinux_2_17");  // aarch64 starts at 2014
  CHECK(policies().levels("i686").empty());
  std::string arch;
  const auto* p = policies().for_platform("manylinux2014_x86_64", &arch);
  REQUIRE(p);
  CHECK(p->name == "manylinux_2_17");
  CHECK(arch == "x86_64");
  CHECK(policies().for_platform("manylinux_2_17_aarch64", &arch) == p);
  CHECK(arch == "aarch64");
  CHECK(policies().for_platform("linux_x86_64") == nullptr);
  CHECK(policies().for_platform("musllinux_1_2_x86_64") == nullptr);
  CHECK(p->lib_whitelist.count("libc.so.6"));
  CHECK_FALSE(p->lib_whitelist.count("libtorch.so"));
}

TEST_CASE("P2: VERNEED versions are members of the policy's set") {
  std::string arch;
  const auto* p2014 = policies().for_platform("manylinux2014_x86_64", &arch);
  Findings f;
  check_symbol_versions(ext(), *p2014, arch, f);
  CHECK(f.empty());
  auto b = ext();
  b.verneed.push_back({"libc.so.6", {"GLIBC_2.29", "GLIBC_PRIVATE"}});
  b.verneed.push_back({"ld-linux-x86-64.so.2", {"GLIBC_2.99"}});  // the loader is exempt
  check_symbol_versions(b, *p2014, arch, f);
  CHECK(rules(f) == std::multiset<std::string>{"P2", "P2"});
  f.clear();
  const auto* p231 = policies().for_platform("manylinux_2_31_x86_64", &arch);
  check_symbol_versions(b, *p231, arch, f);
  CHECK(rules(f) == std::multiset<std::string>{"P2"});  // 2.29 is fine for 2_31; GLIBC_PRIVATE never
}

TEST_CASE("P3: whitelist, allow-list, shipped via $ORIGIN, never libpython") {
  std::string arch;
  const auto* p = policies().for_platform("manylinux_2_28_x86_64", &arch);
  std::vector<std::string> allowed = {"libtorch*", "libc10*", "libcudart.so.*"};
  Findings f;
  check_needed_libraries(ext(), p, allowed, {}, f);
  CHECK(f.empty());
  auto b = ext();
  b.needed = {"libfoo.so.1", "libbar.so.2", "libpython3.12.so.1.0"};
  b.rpaths = {"$ORIGIN/../sageattention.libs"};
  check_needed_libraries(b, p, allowed, {"sageattention.libs/libfoo.so.1"}, f);
  CHECK(rules(f) == std::multiset<std::string>{"P3", "P3"});  // libbar not shipped; libpython
  f.clear();
  check_needed_libraries(b, nullptr, allowed, {}, f);  // no manylinux claim: nothing to judge
  CHECK(f.empty());
}

TEST_CASE("P1: machine vs platform tag") {
  Findings f;
  check_machine(ext(), "manylinux_2_28_x86_64", f);
  check_machine(ext(), "win_amd64", f);  // not an ELF platform
  CHECK(f.empty());
  check_machine(ext(), "manylinux_2_28_aarch64", f);
  CHECK(rules(f) == std::multiset<std::string>{"P1"});
}

TEST_CASE("B6: CUDA coverage per arch and kernel family") {
  CudaCode code;
  code.sass_kernels[80] = {"_Z12quant_kernelPv"};
  code.sass_kernels[89] = {"_Z12quant_kernelPv", "_Z13pv_fp8_kernelPv"};
  code.sass_kernels[90] = {"_Z12quant_kernelPv", "_Z13pv_fp8_kernelPv"};
  code.ptx = {120};
  Findings f;
  check_cuda_coverage(code, info(), "m", f);
  CHECK(f.empty());
  code.sass_kernels[90] = {"_Z12quant_kernelPv"};  // pv_fp8 missing for sm_90, no PTX <= 90
  check_cuda_coverage(code, info(), "m", f);
  CHECK(rules(f) == std::multiset<std::string>{"B6"});
  f.clear();
  code.ptx = {89};  // PTX for 8.9 JIT-compiles on 9.0 and 12.0
  code.sass_kernels.erase(90);
  check_cuda_coverage(code, info(), "m", f);
  CHECK(f.empty());
}

TEST_CASE("B6: a family with exact archs needs SASS for exactly those targets where the wheel lists their arch") {
  auto b = info();  // archs 8.0, 8.9, 9.0, 12.0
  b.kernel_families["sm90"] = {"", "attn_sm90_kernel", {"9.0a"}};
  CudaCode code;
  for (int a : {80, 89, 90, 120}) {
    code.sass_kernels[a] = {"_Z12quant_kernelPv", "_Z13pv_fp8_kernelPv"};
    code.sass_targets[std::to_string(a)] = code.sass_kernels[a];
  }
  code.ptx = {120};
  SECTION("covered: sm_90a SASS holds the family's kernels") {
    code.sass_kernels[90].push_back("_Z16attn_sm90_kernelPv");
    code.sass_targets["90a"] = {"_Z16attn_sm90_kernelPv"};
    Findings f;
    check_cuda_coverage(code, b, "m", f);
    CHECK(f.empty());
  }
  SECTION("missing sm_90a: plain sm_90 SASS or PTX do not count") {
    code.sass_kernels[90].push_back("_Z16attn_sm90_kernelPv");
    code.sass_targets["90"].push_back("_Z16attn_sm90_kernelPv");  // sm_90, not sm_90a
    code.ptx = {80, 90};
    Findings f;
    check_cuda_coverage(code, b, "sageattention/_C.abi3.so", f);
    REQUIRE(f.size() == 1);
    CHECK(f[0].rule == "B6");
    CHECK(f[0].member == "sageattention/_C.abi3.so");
    CHECK(f[0].message.find("no sm90 kernels for sm_90a") != std::string::npos);
    CHECK(f[0].message.find("'attn_sm90_kernel'") != std::string::npos);
    CHECK(f[0].expected.find("build_info.kernel_families.sm90.archs") != std::string::npos);
  }
  SECTION("sm_90a SASS of other kernels only") {
    code.sass_targets["90a"] = {"_Z12quant_kernelPv"};
    Findings f;
    check_cuda_coverage(code, b, "m", f);
    CHECK(rules(f) == std::multiset<std::string>{"B6"});
  }
  SECTION("not demanded when the wheel does not list 9.0") {
    b.archs = {"8.0", "8.9", "12.0"};
    Findings f;
    check_cuda_coverage(code, b, "m", f);
    CHECK(f.empty());
  }
  SECTION("each target at its own arch") {
    b.kernel_families["sm90"].archs = {"9.0a", "12.0a"};
    code.sass_targets["90a"] = {"_Z16attn_sm90_kernelPv"};
    Findings f;
    check_cuda_coverage(code, b, "m", f);
    REQUIRE(f.size() == 1);
    CHECK(f[0].message.find("sm_120a") != std::string::npos);
  }
}

TEST_CASE("B7: libcudart and torch's CUDA major match the build") {
  Findings f;
  check_cuda_runtime(ext(), info(), f);
  CHECK(f.empty());
  auto b = ext();
  b.needed.push_back("libcudart.so.12");
  auto i = info();
  i.torch.cuda = "12.8";
  check_cuda_runtime(b, i, f);
  CHECK(rules(f) == std::multiset<std::string>{"B7", "B7"});
}

TEST_CASE("B8/B9: undefined symbols come from torch, CUDA, the runtime or libpython") {
  Findings f;
  check_symbol_origins(ext(), true, f);
  CHECK(f.empty());
  auto b = ext();
  b.undefined.push_back({"_ZN5boost6threadC1Ev", "", false});
  b.undefined.push_back({"mystery_function", "", false});
  b.undefined.push_back({"_PyObject_GC_New", "", false});
  check_symbol_origins(b, true, f);
  CHECK(rules(f) == std::multiset<std::string>{"B8", "B8", "B9"});
  f.clear();
  check_symbol_origins(b, false, f);  // per-interpreter wheels may use private CPython API
  CHECK(rules(f) == std::multiset<std::string>{"B8", "B8"});
}

TEST_CASE("B8: the stable ABI's C shim names are torch's; look-alikes are not") {
  Findings f;
  auto b = ext();
  b.undefined = {{"aoti_torch_get_current_cuda_stream", "", false},
                 {"aoti_torch_empty_strided", "", false},
                 {"torch_call_dispatcher", "", false},
                 {"torch_library_impl", "", false}};
  check_symbol_origins(b, true, f);
  CHECK(f.empty());
  b.undefined = {{"aoti_tensor_get", "", false}, {"xtorch_call", "", false}};
  check_symbol_origins(b, true, f);
  CHECK(rules(f) == std::multiset<std::string>{"B8", "B8"});
}

TEST_CASE("helpers: globs and mangled namespaces") {
  CHECK(glob_match("libtorch*", "libtorch_cuda.so"));
  CHECK(glob_match("libcudart.so.*", "libcudart.so.13"));
  CHECK_FALSE(glob_match("libcudart.so.*", "libcudart.so"));
  CHECK(outer_namespace("_ZN2at6TensorC1Ev") == "at");
  CHECK(outer_namespace("_ZNK3c1010TensorImpl5sizesEv") == "c10");
  CHECK(outer_namespace("_ZTIN5torch8autograd4NodeE") == "torch");
  CHECK(outer_namespace("memcpy").empty());
}

TEST_CASE("P9: a PE image's machine matches each Windows platform tag") {
  Findings f;
  check_pe_machine("pkg/_C.pyd", "win_amd64", "win_amd64", f);
  CHECK(f.empty());
  check_pe_machine("pkg/_C.pyd", "win_amd64", "linux_x86_64", f);  // not a Windows tag: P1's business
  CHECK(f.empty());
  check_pe_machine("pkg/_C.pyd", "win_arm64", "win_amd64", f);
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "P9");
  CHECK(f[0].severity == Severity::Strict);
  CHECK(f[0].message == "PE machine win_arm64");
  CHECK(f[0].expected == "the platform tag win_amd64");
  f.clear();
  check_pe_machine("pkg/_C.pyd", "", "win32", f);
  REQUIRE(f.size() == 1);
  CHECK(f[0].message == "PE machine unknown");
}

TEST_CASE("B7 on Windows: the imported cudart names the build-info's CUDA major") {
  distinfo::BuildInfo b = info();
  b.cuda.version = "13.0";
  Findings f;
  check_pe_cuda_runtime("pkg/_C.pyd", {"KERNEL32.dll", "c10.dll", "torch_cpu.dll", "cudart64_13.dll"}, b, f);
  CHECK(f.empty());
  check_pe_cuda_runtime("pkg/_C.pyd", {"python3.dll"}, b, f);  // static cudart: nothing to judge
  CHECK(f.empty());
  check_pe_cuda_runtime("pkg/_C.pyd", {"CUDART64_12.DLL"}, b, f);
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "B7");
  CHECK(f[0].expected == "cudart64_13.dll (CUDA 13.0)");
  b.cuda.version = "11.8";
  f.clear();
  check_pe_cuda_runtime("pkg/_C.pyd", {"cudart64_110.dll"}, b, f);  // CUDA 11 spelled the minor too
  CHECK(f.empty());
}

TEST_CASE("B6: in a wheel of several modules named as families, each module answers for its own kernels") {
  auto b = info();  // archs 8.0, 8.9, 9.0, 12.0
  b.archs = {"9.0"};
  b.kernel_families = {{"_fused", {"", "QuantInt8Kernel", {"9.0a"}}},
                       {"_qattn_sm90", {"", "qk_int8_sv_f8_attn_kernel", {"9.0a"}}}};
  CudaCode fused;
  fused.sass_targets["90a"] = {"_Z15QuantInt8KernelPv"};
  Findings f;
  check_cuda_coverage(fused, b, "sageattention/_fused.cpython-312-x86_64-linux-gnu.so", f);
  CHECK(f.empty());  // _qattn_sm90's kernels are not _fused's to carry
  check_cuda_coverage(fused, b, "sageattention/_qattn_sm90.cpython-312-x86_64-linux-gnu.so", f);
  CHECK(rules(f) == std::multiset<std::string>{"B6"});  // ...but _qattn_sm90 must carry them
  f.clear();
  check_cuda_coverage(fused, b, "sageattention/_C.abi3.so", f);  // not a family's module: every family
  CHECK(rules(f) == std::multiset<std::string>{"B6"});
}
