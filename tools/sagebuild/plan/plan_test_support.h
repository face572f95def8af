// The planner tests' fixtures (plan_test.cc): an in-memory repository with
// an object cache, the kernel manifests, rows and fake toolchain facts of
// both host toolchains (GNU and MSVC), and lookups into a compile graph.
// Test-only.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sagebuild/common/arch.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/toolchain/gnu_toolchain.h"
#include "sagebuild/toolchain/msvc_toolchain.h"

namespace sb::plan::testing {

inline Arch A(const char* s) { return sb::parse_arch_arg(s, "test"); }

enum class Kind { gnu, msvc };

struct FakeRepo {
  std::map<std::filesystem::path, std::string> files = {
      {"/repo/kernels/src/quant.cu", "#include \"sage/quant.h\"\n__global__ void q() {}\n"},
      {"/repo/kernels/src/pv_fp16.cu", "#include \"sage/common.h\"\n#include <cuda_fp16.h>\n"},
      {"/repo/kernels/src/pv_fp8.cu", "#include \"sage/common.h\"\n"},
      {"/repo/kernels/src/attn_sm90.cu", "#include \"sage/common.h\"\n__global__ void attn_sm90_kernel() {}\n"},
      {"/repo/kernels/include/sage/quant.h", "#pragma once\n#include \"common.h\"\n"},
      {"/repo/kernels/include/sage/common.h", "#pragma once\nconstexpr int kTile = 64;\n"},
      {"/repo/kernels/binding/ops.cc", "#include <torch/library.h>\n#include \"sage/quant.h\"\n"},
      {"/repo/kernels/binding/ops_stable.cc", "#include <torch/csrc/stable/library.h>\n#include \"sage/quant.h\"\n"},
  };
  std::set<std::filesystem::path> objects;  // what the object cache holds
  ReadFileFn reader() {
    return [this](const std::filesystem::path& p) -> std::optional<std::string> {
      auto it = files.find(p.lexically_normal());
      if (it == files.end()) return std::nullopt;
      return it->second;
    };
  }
  PlanSettings settings() {
    PlanSettings s;
    s.repo_root = "/repo";
    s.read = reader();
    s.exists = [this](const std::filesystem::path& p) { return objects.count(p) > 0; };
    return s;
  }
};

inline KernelManifest manifest() {
  KernelManifest m;
  m.path = "/repo/kernels/families.json";
  m.families = {{"pv_fp16", {"kernels/src/pv_fp16.cu"}, A("8.0"), "pv16"},
                {"pv_fp8", {"kernels/src/pv_fp8.cu"}, A("8.9"), "pv8"},
                {"quant", {"kernels/src/quant.cu"}, A("8.0"), "quant"}};
  m.binding_sources = {"kernels/binding/ops.cc"};
  m.include_dirs = {"kernels/include"};
  m.nvcc_flags = {"--use_fast_math"};
  return m;
}

inline KernelManifest stable_manifest() {
  KernelManifest m = manifest();
  m.stable_abi = StableAbiBinding{"kernels/binding/ops_stable.cc", {2, 10}, {2, 10}};
  return m;
}

// The families.json contract's Hopper family: exact target 9.0a.
inline KernelFamily sm90_family() {
  KernelFamily f;
  f.name = "sm90";
  f.sources = {"kernels/src/attn_sm90.cu"};
  f.archs = {A("9.0a")};
  f.symbol_marker = "attn_sm90_kernel";
  return f;
}

inline KernelManifest manifest_with_sm90() {
  auto m = manifest();
  m.families.push_back(sm90_family());
  return m;
}

inline sb::matrix::Row row(Kind kind, const std::string& torch,
                           std::vector<Arch> archs = {A("8.0"), A("8.9"), A("9.0a")}) {
  sb::matrix::Row r;
  r.platform = kind == Kind::gnu ? "linux_x86_64" : "win_amd64";
  r.id = "sageattention-2.2.0-torch" + torch + "-cu130-abi3-" + r.platform;
  r.package = "sageattention";
  r.version = "2.2.0";
  r.abi_mode = sb::wheel::AbiMode::abi3;
  r.pythons = {{3, 10}, {3, 11}, {3, 12}};
  r.build_python = {3, 10};
  r.torch = *sb::matrix::TorchVersion::parse(torch);
  r.cuda = {13, 0};
  r.archs = std::move(archs);
  r.ptx_arch = A("8.9");
  return r;
}

inline sb::toolchain::RowToolchain toolchain(Kind kind, const std::string& torch, const std::string& nvcc = "13.0.88") {
  sb::toolchain::RowToolchain t;
  if (kind == Kind::gnu)
    t.host = std::make_shared<sb::toolchain::GnuToolchain>(
        sb::toolchain::GnuTools{"/cuda/bin/nvcc", nvcc, "/usr/bin/g++", {"gcc", "12.2.0"}});
  else
    t.host = std::make_shared<sb::toolchain::MsvcToolchain>(
        sb::toolchain::MsvcTools{"C:\\CUDA\\bin\\nvcc.exe", nvcc, "C:\\VS\\cl.exe", "C:\\VS\\link.exe", "14.44"});
  t.nvcc_version = nvcc;
  t.cuda_include = "/cuda/include";
  t.cuda_lib = "/cuda/lib64";
  t.torch = {"/cache/torch/" + torch, torch + "+cu130", true};
  t.row_torch_cuda = "13.0";
  t.python_include = "/usr/include/python3.11";
  t.python_lib_dir = "/py/libs";
  t.python_version = "3.11";
  return t;
}

inline BuildSite site() { return {"/repo", "/cache/objects", "/cache/extensions", "/cache/work/default", {}}; }

inline RowInput input(Kind kind, const sb::matrix::Row& r, const KernelManifest& m, sb::toolchain::RowToolchain tc) {
  return RowInput{r, extension_from_families(m, r), std::move(tc), site()};
}
inline RowInput input(Kind kind, const std::string& torch, const KernelManifest& m = manifest()) {
  return input(kind, row(kind, torch), m, toolchain(kind, torch));
}

inline const graph::Edge* edge_for(const CompileGraph& g, const std::filesystem::path& out) {
  for (const auto& e : g.edges)
    if (e.output == out) return &e;
  return nullptr;
}

inline std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

inline const PlannedObject* kernel_of(const RowGraph& rg, const std::string& family) {
  for (const auto& e : rg.extensions)
    for (const auto& k : e.kernels)
      if (k.family == family) return &k;
  return nullptr;
}

}  // namespace sb::plan::testing
