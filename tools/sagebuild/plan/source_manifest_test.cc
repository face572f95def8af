// matrix/sources/<kind>.yaml: parsed, refused with the key at fault, and
// turned into a row's extension modules and their compile graph.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/plan/source_manifest.h"
#include "sagebuild/toolchain/gnu_toolchain.h"

using namespace sb::plan;
namespace fs = std::filesystem;
using sb::Arch;

namespace {

Arch A(const char* s) { return *sb::parse_arch(s); }

const char* kManifest = R"(kind: upstream-demo
markers: [setup.py, csrc/a.cu]
package: demo
package_files: ["*.py"]
summary: a demo
license: {expression: Apache-2.0, file: LICENSE}
arch_targets: {"9.0": "9.0a"}
nvcc_flags: [-O3, -D__CUDA_NO_HALF_OPERATORS__, -U__CUDA_NO_HALF_OPERATORS__, --use_fast_math]
cxx_flags: [-O3, -std=c++17]
extensions:
  demo._any:
    sources: [csrc/any.cpp, csrc/a.cu]
    min_arch: "8.0"
    symbol_marker: any_kernel
    exports: [run]
  demo._hopper:
    sources: [csrc/hopper.cpp, csrc/h.cu]
    archs: ["9.0a"]
    symbol_marker: hopper_kernel
    libraries: [cuda]
)";

std::string with(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

sb::matrix::Row row(std::vector<Arch> archs) {
  sb::matrix::Row r;
  r.id = "upstream-demo-1.0-torch2.11.0-cu130-cp312-linux_x86_64";
  r.package = "upstream-demo";
  r.project = "demo";
  r.source = "upstream-demo";
  r.platform = "linux_x86_64";
  r.abi_mode = sb::wheel::AbiMode::per_interpreter;
  r.pythons = {{3, 12}};
  r.build_python = {3, 12};
  r.torch = {2, 11, 0, true};
  r.cuda = {13, 0};
  r.archs = std::move(archs);
  r.ptx_arch = r.archs.back();
  return r;
}

sb::toolchain::RowToolchain toolchain(const std::string& torch) {
  sb::toolchain::RowToolchain t;
  t.host = std::make_shared<sb::toolchain::GnuToolchain>(
      sb::toolchain::GnuTools{"/cuda/bin/nvcc", "13.0.88", "/usr/bin/g++", {"gcc", "12.2.0"}});
  t.nvcc_version = "13.0.88";
  t.cuda_include = "/cuda/include";
  t.cuda_lib = "/cuda/lib64";
  t.cuda_stubs = "/cuda/lib64/stubs";
  t.torch = {"/cache/torch/" + torch, torch + "+cu130", true};
  t.python_include = "/usr/include/python3.12";
  t.python_version = "3.12";
  return t;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

}  // namespace

TEST_CASE("source manifests are parsed, and mistakes named at file:line") {
  auto m = parse_source_manifest(kManifest, "demo.yaml");
  CHECK(m.kind == "upstream-demo");
  REQUIRE(m.extensions.size() == 2);
  CHECK(m.extensions[0].module == "demo._any");
  CHECK(m.extensions[0].min_arch->name() == "8.0");
  CHECK(m.extensions[1].archs == std::vector<Arch>{A("9.0a")});
  CHECK(m.extensions[1].libraries == std::vector<std::string>{"cuda"});
  CHECK(m.arch_targets.at(A("9.0")) == A("9.0a"));
  CHECK(m.license_expression == "Apache-2.0");
  CHECK_THROWS_WITH(parse_source_manifest(with(kManifest, "csrc/any.cpp", "../any.cpp"), "demo.yaml"),
                    Catch::Contains("demo.yaml:12") && Catch::Contains("inside the checkout"));
  CHECK_THROWS_WITH(parse_source_manifest(with(kManifest, "    min_arch: \"8.0\"\n", ""), "demo.yaml"),
                    Catch::Contains("neither min_arch nor archs"));
  CHECK_THROWS_WITH(
      parse_source_manifest(with(kManifest, "csrc/h.cu]", "csrc/h.cu]\n    min_arch: \"8.0\""), "demo.yaml"),
      Catch::Contains("both min_arch and archs"));
  CHECK_THROWS_WITH(parse_source_manifest(with(kManifest, "csrc/any.cpp, csrc/a.cu", "csrc/any.cpp"), "demo.yaml"),
                    Catch::Contains("no CUDA source"));
  CHECK_THROWS_WITH(parse_source_manifest(with(kManifest, "kind: upstream-demo", "kind: ours"), "demo.yaml"),
                    Catch::Contains("demo.yaml:1"));
  CHECK_THROWS_WITH(parse_source_manifest(with(kManifest, "demo._hopper:", "other._any:"), "demo.yaml"),
                    Catch::Contains("same name"));
  CHECK_THROWS_WITH(parse_source_manifest(with(kManifest, "summary:", "sumary:"), "demo.yaml"),
                    Catch::Contains("sumary"));
}

TEST_CASE("the repository's own source manifests describe upstream's trees") {
  fs::path dir = fs::path(SAGEBUILD_SOURCE_DIR) / "matrix" / "sources";
  auto sage = load_source_manifest(dir / "upstream-sageattention.yaml");
  CHECK(sage.kind == "upstream-sageattention");
  std::vector<std::string> modules;
  for (const auto& e : sage.extensions) modules.push_back(e.module);
  CHECK(modules == std::vector<std::string>{"sageattention._qattn_sm80", "sageattention._qattn_sm89",
                                            "sageattention._qattn_sm90", "sageattention._fused"});
  auto sage3 = load_source_manifest(dir / "upstream-sageattn3.yaml");
  REQUIRE(sage3.headers.size() == 1);
  CHECK(sage3.headers[0].requirement() == "nvidia-cutlass==4.2.0.0");
  // Upstream's 9.0 row: every module for sm_90a only, as setup.py builds it.
  auto spec = extensions_from_source(sage, row({A("9.0")}));
  REQUIRE(spec.extensions.size() == 4);
  for (const auto& e : spec.extensions)
    for (const auto& k : e.kernels) CHECK(k.gencode == std::vector<std::string>{"arch=compute_90a,code=sm_90a"});
  CHECK(spec.ptx_archs.empty());
  CHECK(spec.package == "sageattention");
}

TEST_CASE("a source manifest's row: the modules with a target, their flags, one link each") {
  auto m = parse_source_manifest(kManifest, "demo.yaml");
  auto r = row({A("8.0"), A("8.9")});
  auto spec = extensions_from_source(m, r);
  REQUIRE(spec.extensions.size() == 1);  // no 9.0: _hopper is left out, as setup.py leaves it out
  CHECK(spec.skipped_families.size() == 1);
  const auto& any = spec.extensions[0];
  CHECK(any.module == "demo._any");
  REQUIRE(any.kernels.size() == 1);
  CHECK(any.kernels[0].torch_headers);
  CHECK(any.kernels[0].gencode ==
        std::vector<std::string>{"arch=compute_80,code=sm_80", "arch=compute_89,code=sm_89"});  // no PTX
  // The -U undoes the -D written before it, as it does on nvcc's command line.
  auto& defines = any.kernels[0].flags.defines;
  CHECK(std::find(defines.begin(), defines.end(), "__CUDA_NO_HALF_OPERATORS__") == defines.end());
  CHECK(std::find(defines.begin(), defines.end(), "TORCH_EXTENSION_NAME=_any") != defines.end());
  REQUIRE(any.bindings.size() == 1);
  CHECK(any.bindings[0].source == "csrc/any.cpp");
  CHECK(spec.families[0].archs == std::vector<Arch>{A("8.0"), A("8.9")});  // what build_info records
  // An abi3 row cannot take pybind11 modules on the classic API.
  auto abi3 = r;
  abi3.abi_mode = sb::wheel::AbiMode::abi3;
  CHECK_THROWS_AS(extensions_from_source(m, abi3), sb::UsageError);

  // 9.0 maps to 9.0a: both modules; _hopper links the driver through CUDA's stubs.
  auto hopper = row({A("9.0")});
  auto spec90 = extensions_from_source(m, hopper);
  REQUIRE(spec90.extensions.size() == 2);
  PlanSettings st;
  st.repo_root = "/up";
  st.read = [](const fs::path& p) -> std::optional<std::string> {
    if (p.extension() == ".cu" || p.extension() == ".cpp") return std::string("// ") + p.string() + "\n";
    return std::nullopt;
  };
  st.exists = [](const fs::path&) { return false; };
  RowInput in{hopper, spec90, toolchain("2.11.0"), {"/up", "/c/objects", "/c/extensions", "/c/work", {}}};
  auto g = plan_compile({in}, st);
  REQUIRE(g.rows.size() == 1);
  REQUIRE(g.rows[0].extensions.size() == 2);
  CHECK(g.rows[0].extensions[0].filename == "_any.cpython-312-x86_64-linux-gnu.so");
  const auto& link = *std::find_if(g.edges.begin(), g.edges.end(),
                                   [&](const auto& e) { return e.output == g.rows[0].extensions[1].path; });
  auto argv = joined(link.argv);
  CHECK(argv.find("-L/cuda/lib64/stubs -lcuda") != std::string::npos);
  CHECK(argv.find("-ltorch_python") != std::string::npos);
  const auto& kernel = *std::find_if(g.edges.begin(), g.edges.end(), [&](const auto& e) {
    return e.output == g.rows[0].extensions[0].kernels[0].object;
  });
  auto nvcc = joined(kernel.argv);
  CHECK(nvcc.find("-isystem " + (fs::path("/cache/torch/2.11.0") / "include").string() + " ") !=
        std::string::npos);  // torch's headers
  CHECK(nvcc.find("-D_GLIBCXX_USE_CXX11_ABI=1") != std::string::npos);
  // Kernel objects that include torch's headers are per torch build.
  RowInput other = in;
  other.toolchain = toolchain("2.10.0");
  auto g2 = plan_compile({other}, st);
  CHECK(g2.rows[0].extensions[0].kernels[0].key != g.rows[0].extensions[0].kernels[0].key);
  // ...and shared where every input is the same.
  auto both = plan_compile({in, in}, st);
  CHECK(both.kernels_to_compile == 2);
}

TEST_CASE("cuda_libraries: the CUDA library headers a tree includes, for each row's CUDA") {
  auto m = parse_source_manifest(with(kManifest, "cxx_flags:", "cuda_libraries: [cublas, cusparse]\ncxx_flags:"),
                                 "demo.yaml");
  CHECK(m.cuda_libraries == std::vector<std::string>{"cublas", "cusparse"});
  CHECK_THROWS_WITH(
      parse_source_manifest(with(kManifest, "cxx_flags:", "cuda_libraries: [cublas, cufft]\ncxx_flags:"), "demo.yaml"),
      Catch::Contains("demo.yaml:9") && Catch::Contains("'cufft' is not a CUDA library"));
  // CUDA 13: NVIDIA's unsuffixed wheels, their headers in nvidia/cu13/include.
  auto spec = extensions_from_source(m, row({A("8.0")}));
  REQUIRE(spec.headers.size() == 2);
  CHECK(spec.headers[0].requirement() == "nvidia-cublas==13.1.1.3");
  CHECK(spec.headers[0].include_dirs == std::vector<std::string>{"nvidia/cu13/include"});
  CHECK(spec.headers[0].platform == "linux_x86_64");
  CHECK(spec.headers[1].requirement() == "nvidia-cusparse==12.6.3.3");
  // CUDA 12: the -cu12 wheels, one directory per library.
  auto r128 = row({A("8.0")});
  r128.cuda = {12, 8};
  auto spec128 = extensions_from_source(m, r128);
  REQUIRE(spec128.headers.size() == 2);
  CHECK(spec128.headers[0].requirement() == "nvidia-cublas-cu12==12.8.5.5");
  CHECK(spec128.headers[1].include_dirs == std::vector<std::string>{"nvidia/cusparse/include"});
  // A CUDA without pins is refused, saying where they come from.
  auto r124 = row({A("8.0")});
  r124.cuda = {12, 4};
  CHECK_THROWS_WITH(extensions_from_source(m, r124), Catch::Contains("cuda-toolkit==12.4.*"));
  // The repository's sageattn3 manifest declares what torch's CUDAContext.h includes.
  auto sage3 = load_source_manifest(fs::path(SAGEBUILD_SOURCE_DIR) / "matrix/sources/upstream-sageattn3.yaml");
  CHECK(sage3.cuda_libraries == std::vector<std::string>{"cublas", "cusparse", "cusolver"});
}

TEST_CASE("peak_memory_gib: an extension's units carry it, scaled by the archs nvcc compiles side by side") {
  auto m = parse_source_manifest(
      with(kManifest, "    exports: [run]\n", "    exports: [run]\n    peak_memory_gib: 10\n"), "demo.yaml");
  CHECK(m.extensions[0].peak_memory_gib == 10);
  CHECK(m.extensions[1].peak_memory_gib == 0);
  CHECK_THROWS_WITH(
      parse_source_manifest(with(kManifest, "    exports: [run]\n", "    exports: [run]\n    peak_memory_gib: lots\n"),
                            "demo.yaml"),
      Catch::Contains("demo.yaml:16") && Catch::Contains("expected a number of GiB"));
  auto r = row({A("8.0"), A("8.9")});
  auto spec = extensions_from_source(m, r);
  PlanSettings st;
  st.repo_root = "/up";
  st.read = [](const fs::path& p) -> std::optional<std::string> { return std::string("// ") + p.string() + "\n"; };
  st.exists = [](const fs::path&) { return false; };
  RowInput in{r, spec, toolchain("2.11.0"), {"/up", "/c/objects", "/c/extensions", "/c/work", {}}};
  auto peak_of = [&](int threads) {
    st.nvcc_threads = threads;
    auto g = plan_compile({in}, st);
    double peak = -1;
    for (const auto& e : g.edges)
      if (e.description.rfind("nvcc", 0) == 0) peak = e.peak_memory_gib;
    return peak;
  };
  CHECK(peak_of(1) == 10);  // one arch at a time
  CHECK(peak_of(8) == 20);  // both archs side by side
}

TEST_CASE("preprocess: every unit's own command with -E, cached or not, and no link") {
  auto m = parse_source_manifest(kManifest, "demo.yaml");
  auto r = row({A("9.0")});
  auto spec = extensions_from_source(m, r);
  PlanSettings st;
  st.repo_root = "/up";
  st.read = [](const fs::path& p) -> std::optional<std::string> { return std::string("// ") + p.string() + "\n"; };
  st.exists = [](const fs::path&) { return true; };  // everything cached: a build would compile nothing
  RowInput in{r, spec, toolchain("2.11.0"), {"/up", "/c/objects", "/c/extensions", "/c/work", {"/usr/bin/ccache"}}};
  auto build = plan_compile({in}, st);
  CHECK(build.kernels_to_compile == 0);  // only the per-row links
  for (const auto& e : build.edges) CHECK(e.description.rfind("link", 0) == 0);
  st.preprocess = true;
  auto pre = plan_compile({in}, st);
  REQUIRE(pre.edges.size() == 4);  // 2 kernels, 2 bindings, no link
  st.exists = [](const fs::path&) { return false; };
  st.preprocess = false;
  auto cold = plan_compile({in}, st);
  for (const auto& e : pre.edges) {
    CHECK(e.output.parent_path() == fs::path("/c/work/preprocess"));
    // The build's own command for the unit, but -E for -c and the output.
    const auto& c =
        *std::find_if(cold.edges.begin(), cold.edges.end(), [&](const auto& x) { return x.inputs == e.inputs; });
    REQUIRE(c.argv.size() == e.argv.size());
    int differ = 0;
    for (std::size_t i = 0; i < c.argv.size(); ++i)
      if (c.argv[i] != e.argv[i]) {
        ++differ;
        CHECK(((c.argv[i] == "-c" && e.argv[i] == "-E") ||
               fs::path(e.argv[i]).parent_path() == fs::path("/c/work/preprocess")));
      }
    CHECK(differ == 2);  // -c -> -E, and the output file
  }
}
