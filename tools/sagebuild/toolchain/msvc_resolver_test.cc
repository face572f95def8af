// The Windows (win_amd64) compile graph, made on Linux: exact command lines
// from the platform unit's MsvcToolchain, the flag translation, discovery
// against recorded vswhere/vcvars output, and `sagebuild build` on a win row.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sagebuild/rows/build.h"
#include "sagebuild/run/ninja.h"
#include "sagebuild/toolchain/msvc_resolver.h"
#include "sagebuild/common/error.h"
#include "sagebuild/run/win_cmdline.h"

using namespace sb::toolchain;
namespace fs = std::filesystem;
using sb::matrix::Arch;

namespace {

Arch A(const char* s) { return parse_arch_arg(s, "test"); }

ReadFileFn reader() {
  static const std::map<fs::path, std::string> files = {
      {"/repo/kernels/src/quant.cu", "#include \"sage/common.h\"\n"},
      {"/repo/kernels/include/sage/common.h", "#pragma once\n"},
      {"/repo/kernels/binding/ops.cc", "#include \"sage/common.h\"\n"},
  };
  return [](const fs::path& p) -> std::optional<std::string> {
    auto it = files.find(p.lexically_normal());
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

WindowsRowInput win_row() {
  WindowsRowInput in;
  auto& r = in.row;
  r.id = "sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64";
  r.abi_mode = sb::matrix::AbiMode::abi3;
  r.pythons = {"3.9", "3.10"};
  r.build_python = "3.10";
  r.torch = "2.7.1";
  r.cuda = "12.8";
  r.platform = "win_amd64";
  r.archs = {A("8.0"), A("9.0")};
  r.ptx_arch = A("9.0");
  auto& m = in.manifest;
  m.path = "/repo/kernels/families.json";
  m.families = {{"quant", {"kernels/src/quant.cu"}, A("8.0")}};
  m.binding_sources = {"kernels/binding/ops.cc"};
  m.include_dirs = {"kernels/include"};
  m.nvcc_flags = {"-std=c++17", "-O3", "--use_fast_math", "-Xcompiler=-fPIC"};
  m.cxx_flags = {"-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden"};
  auto& f = in.facts;
  f.cuda_path = R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8)";
  f.nvcc = f.cuda_path + R"(\bin\nvcc.exe)";
  f.nvcc_version = "12.8.93";
  f.cl = R"(C:\VS\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64\cl.exe)";
  f.link = R"(C:\VS\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64\link.exe)";
  f.msvc_version = "14.44.35207";
  f.torch_root = R"(C:\py\Lib\site-packages\torch)";
  f.python_include = R"(C:\py\include)";
  f.python_lib_dir = R"(C:\py\libs)";
  return in;
}

WindowsPlanSettings settings() {
  WindowsPlanSettings s;
  s.repo_root = "/repo";
  s.win_repo_root = R"(D:\a\sage attention)";
  s.win_objects_dir = R"(C:\cache\objects)";
  s.win_work_dir = R"(C:\cache\work)";
  s.read = reader();
  return s;
}

using Argv = std::vector<std::string>;

}  // namespace

TEST_CASE("windows plan: exact nvcc, cl and link.exe argv for one row") {
  WindowsPlan p = plan_windows_compile({win_row()}, settings(), false);
  REQUIRE(p.rows.size() == 1);
  REQUIRE(p.edges.size() == 3);
  const auto& rg = p.rows[0];
  REQUIRE(rg.kernels.size() == 1);
  std::string kobj = R"(C:\cache\objects\)" + rg.kernels[0].key + ".obj";
  std::string bobj = R"(C:\cache\objects\)" + rg.binding.key + ".obj";
  CHECK(rg.kernels[0].object.string() == kobj);
  CHECK(p.edges[0].argv ==
        Argv{R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\bin\nvcc.exe)", "-c",
             R"(D:\a\sage attention\kernels\src\quant.cu)", "-o", kobj, "-ccbin",
             R"(C:\VS\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64)", "-std=c++17", "-Xcompiler", "/O2", "-Xcompiler",
             "/MD", "-Xcompiler", "/EHsc", "-Xcompiler", "/Zc:preprocessor", "-gencode=arch=compute_80,code=sm_80",
             "-gencode=arch=compute_90,code=[sm_90,compute_90]", R"(-ID:\a\sage attention\kernels\include)", "-O3",
             "--use_fast_math"});
  CHECK(p.edges[1].argv ==
        Argv{R"(C:\VS\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64\cl.exe)", "/nologo", "/c",
             R"(D:\a\sage attention\kernels\binding\ops.cc)", "/Fo" + bobj, "/O2", "/MD", "/EHsc", "/std:c++17",
             "/Zc:preprocessor", R"(/ID:\a\sage attention\kernels\include)", R"(/IC:\py\Lib\site-packages\torch\include)",
             R"(/IC:\py\Lib\site-packages\torch\include\torch\csrc\api\include)",
             R"(/IC:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\include)", R"(/IC:\py\include)",
             "/DTORCH_EXTENSION_NAME=_C", "/DPy_LIMITED_API=0x03090000"});
  CHECK(p.edges[2].argv ==
        Argv{R"(C:\VS\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64\link.exe)", "/nologo", "/DLL",
             R"(/OUT:C:\cache\work\rows\sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64\_C.pyd)", kobj, bobj,
             R"(C:\py\Lib\site-packages\torch\lib\c10.lib)", R"(C:\py\Lib\site-packages\torch\lib\torch.lib)",
             R"(C:\py\Lib\site-packages\torch\lib\torch_cpu.lib)", R"(C:\py\Lib\site-packages\torch\lib\torch_cuda.lib)",
             R"(C:\py\Lib\site-packages\torch\lib\c10_cuda.lib)",
             R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\lib\x64\cudart.lib)", R"(C:\py\libs\python3.lib)"});
  CHECK(rg.extension_name == "_C.pyd");
  CHECK(rg.families == std::vector<std::string>{"quant"});
}

TEST_CASE("windows plan: families.json's static cudart links cudart_static.lib") {
  auto in = win_row();
  in.manifest.cudart_static = true;
  WindowsPlan p = plan_windows_compile({in}, settings(), false);
  const auto& link = p.edges.back().argv;
  CHECK(link[link.size() - 2] == R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\lib\x64\cudart_static.lib)");
  CHECK(std::find(link.begin(), link.end(), R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\lib\x64\cudart.lib)") ==
        link.end());
}

TEST_CASE("windows plan: command lines quote paths with spaces and split back to the argv") {
  WindowsPlan p = plan_windows_compile({win_row()}, settings(), false);
  std::string line = windows_command_line(p.edges[0]);
  CHECK(line.rfind(R"("C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\bin\nvcc.exe" -c "D:\a\sage attention\kernels\src\quant.cu" -o C:\cache\objects\)",
                   0) == 0);
  CHECK(line.find(R"( "-ID:\a\sage attention\kernels\include" )") != std::string::npos);
  for (const auto& e : p.edges) CHECK(sb::toolchain::split_command_line(windows_command_line(e)) == e.argv);
}

TEST_CASE("windows plan: -allow-unsupported-compiler only when asked") {
  auto has = [](const Argv& a) { return std::find(a.begin(), a.end(), "-allow-unsupported-compiler") != a.end(); };
  CHECK_FALSE(has(plan_windows_compile({win_row()}, settings(), false).edges[0].argv));
  WindowsPlan asked = plan_windows_compile({win_row()}, settings(), true);
  CHECK(has(asked.edges[0].argv));
  // A different nvcc command line is a different object.
  CHECK(asked.rows[0].kernels[0].key != plan_windows_compile({win_row()}, settings(), false).rows[0].kernels[0].key);
}

TEST_CASE("windows plan: per-interpreter rows link python3X.lib into _C.cp3X-win_amd64.pyd") {
  auto in = win_row();
  in.row.abi_mode = sb::matrix::AbiMode::per_interpreter;
  in.row.build_python = "3.12";
  WindowsPlan p = plan_windows_compile({in}, settings(), false);
  CHECK(p.rows[0].extension_name == "_C.cp312-win_amd64.pyd");
  CHECK(p.edges.back().argv.back() == R"(C:\py\libs\python312.lib)");
  for (const auto& a : p.edges[1].argv) CHECK(a.find("Py_LIMITED_API") == std::string::npos);
}

TEST_CASE("windows plan: GCC flags it cannot translate are refused by name") {
  auto in = win_row();
  in.manifest.nvcc_flags.push_back("-Xcompiler=-Wall");
  CHECK_THROWS_WITH(plan_windows_compile({in}, settings(), false),
                    Catch::Contains("-Xcompiler=-Wall") && Catch::Contains("cl.exe"));
  in = win_row();
  in.manifest.cxx_flags.push_back("-march=native");
  CHECK_THROWS_WITH(plan_windows_compile({in}, settings(), false), Catch::Contains("-march=native"));
  in = win_row();
  in.manifest.nvcc_flags = {"-std=c++14"};
  CHECK_THROWS_WITH(plan_windows_compile({in}, settings(), false), Catch::Contains("-std=c++14"));
  in = win_row();
  in.row.platform = "linux_x86_64";
  CHECK_THROWS_WITH(plan_windows_compile({in}, settings(), false), Catch::Contains("not win_amd64"));
}

namespace {

struct FakeRunner : ProcessRunner {
  std::map<std::string, Result> answers;  // by argv[0]
  std::vector<Command> seen;
  Result run(const Command& c) override {
    seen.push_back(c);
    auto it = answers.find(c.argv.empty() ? "" : c.argv[0]);
    if (it == answers.end()) return Result{-1, "", "not faked", false, 0};
    return it->second;
  }
};

const char* kVswhere = R"([{"installationPath": "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise",
  "installationVersion": "17.14.36301.6", "displayName": "Visual Studio Enterprise 2022",
  "isPrerelease": false, "isComplete": true}])";

std::string set_output(bool with_cuda) {
  std::string s =
      "INCLUDE=C:\\VS\\include\r\nLIB=C:\\VS\\lib\r\nLIBPATH=C:\\VS\\lib\r\nPath=C:\\VS\\bin;C:\\Windows\r\n"
      "VCToolsInstallDir=C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Tools\\MSVC\\14.44.35207\\\r\n"
      "VCToolsVersion=14.44.35207\r\nWindowsSdkDir=C:\\Program Files (x86)\\Windows Kits\\10\\\r\n";
  if (with_cuda) s += "CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8\r\n";
  return s;
}

}  // namespace

TEST_CASE("windows discovery: vswhere then vcvars64 through the runner (recorded output)") {
  FakeRunner r;
  r.answers[R"(C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe)"] = Result{0, kVswhere, "", true, 0};
  r.answers["cmd.exe"] = Result{0, set_output(true), "", true, 0};
  auto f = discover_windows_toolchain(r, {R"(C:\Program Files (x86))", false});
  CHECK_FALSE(f.placeholders);
  CHECK(f.cl == R"(C:\Program Files\Microsoft Visual Studio\2022\Enterprise\VC\Tools\MSVC\14.44.35207\bin\Hostx64\x64\cl.exe)");
  CHECK(f.nvcc == R"(C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\bin\nvcc.exe)");
  CHECK(f.msvc_version == "14.44.35207");
  CHECK(f.torch_root == "<TORCH_DIR>");  // not discovered yet: stays a placeholder
  REQUIRE(r.seen.size() == 2);
  REQUIRE(r.seen[1].windows_command_line);
  CHECK(r.seen[1].windows_command_line->find("vcvars64.bat") != std::string::npos);

  r.answers["cmd.exe"] = Result{0, set_output(false), "", true, 0};
  CHECK_THROWS_WITH(discover_windows_toolchain(r, {R"(C:\Program Files (x86))", false}), Catch::Contains("CUDA_PATH"));
  r.answers["cmd.exe"] = Result{0, "[ERROR:vcvars.bat] Toolset directory not found\r\n", "", true, 0};
  CHECK_THROWS_WITH(discover_windows_toolchain(r, {R"(C:\Program Files (x86))", false}),
                    Catch::Contains("VCToolsInstallDir") && Catch::Contains("Toolset directory not found"));
  r.answers.erase(R"(C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe)");
  CHECK_THROWS_WITH(discover_windows_toolchain(r, {R"(C:\Program Files (x86))", false}), Catch::Contains("vswhere.exe"));
  CHECK_THROWS_WITH(discover_windows_toolchain(r, {"", false}), Catch::Contains("ProgramFiles(x86)"));
}

namespace {

// The build Python's answer (windows_python.h's script), written by hand in
// its format; not recorded on a Windows machine.
std::string python_answer(const std::string& torch_version, const std::string& cuda) {
  nlohmann::json j = {
      {"executable", "C:\\py\\python.exe"}, {"version", {3, 12}}, {"include", "C:\\py\\Include"},
      {"libs_dir", "C:\\py\\libs"}, {"has_python_h", true}, {"libs", {"python3.lib", "python312.lib"}},
      {"torch",
       {{"root", "C:\\py\\Lib\\site-packages\\torch"},
        {"lib_dir", "C:\\py\\Lib\\site-packages\\torch\\lib"},
        {"version_py", "__version__ = '" + torch_version + "'\ncuda: Optional[str] = '" + cuda + "'\n"},
        {"libs", {"c10.lib", "c10_cuda.lib", "torch.lib", "torch_cpu.lib", "torch_cuda.lib"}},
        {"include_dirs",
         {"C:\\py\\Lib\\site-packages\\torch\\include",
          "C:\\py\\Lib\\site-packages\\torch\\include\\torch\\csrc\\api\\include"}}}}};
  return j.dump() + "\n";
}

const char* kNvcc128 =
    "nvcc: NVIDIA (R) Cuda compiler driver\r\nCopyright (c) 2005-2025 NVIDIA Corporation\r\n"
    "Cuda compilation tools, release 12.8, V12.8.93\r\nBuild cuda_12.8.r12.8/compiler.35583870_0\r\n";

WindowsToolchainFacts vs_facts(FakeRunner& r) {
  r.answers[R"(C:\Program Files (x86)\Microsoft Visual Studio\Installer\vswhere.exe)"] = Result{0, kVswhere, "", true, 0};
  r.answers["cmd.exe"] = Result{0, set_output(true) + "CUDA_PATH_V12_8=D:\\CUDA\\v12.8\r\n", "", true, 0};
  return discover_windows_toolchain(r, {R"(C:\Program Files (x86))", false});
}

}  // namespace

TEST_CASE("windows discovery of a row: the row's CUDA, nvcc's version, the build Python's torch") {
  FakeRunner r;
  WindowsToolchainFacts vs = vs_facts(r);
  r.answers[R"(D:\CUDA\v12.8\bin\nvcc.exe)"] = Result{0, kNvcc128, "", true, 0};
  r.answers["python"] = Result{0, python_answer("2.7.1+cu128", "12.8"), "", true, 0};
  WindowsToolchainFacts f = discover_windows_row(r, vs, win_row().row, "python");
  CHECK(f.cuda_path == R"(D:\CUDA\v12.8)");  // CUDA_PATH_V12_8 before CUDA_PATH
  CHECK(f.nvcc == R"(D:\CUDA\v12.8\bin\nvcc.exe)");
  CHECK(f.nvcc_version == "12.8.93");
  CHECK(f.torch_root == R"(C:\py\Lib\site-packages\torch)");
  CHECK(f.torch_version == "2.7.1+cu128");
  CHECK(f.torch_cuda == "12.8");
  CHECK(f.python_include == R"(C:\py\Include)");
  CHECK(f.python_lib_dir == R"(C:\py\libs)");
  CHECK_FALSE(f.placeholders);
  CHECK(r.seen.back().argv[0] == "python");

  // The plan made from these facts has no placeholder left.
  WindowsRowInput in = win_row();
  in.facts = f;
  WindowsPlan p = plan_windows_compile({in}, settings(), false);
  for (const auto& e : p.edges) CHECK(windows_command_line(e).find('<') == std::string::npos);

  r.answers["python"] = Result{0, python_answer("2.7.1+cu126", "12.6"), "", true, 0};
  CHECK_THROWS_WITH(discover_windows_row(r, vs, win_row().row, "python"), Catch::Contains("built for CUDA 12.6"));
  r.answers[R"(D:\CUDA\v12.8\bin\nvcc.exe)"] =
      Result{0, "Cuda compilation tools, release 12.6, V12.6.85\r\n", "", true, 0};
  CHECK_THROWS_WITH(discover_windows_row(r, vs, win_row().row, "python"),
                    Catch::Contains("is CUDA 12.6.85") && Catch::Contains("needs CUDA 12.8"));
}

TEST_CASE("posix runner refuses a Windows command line") {
  PosixProcessRunner p;
  Command c({"true"});
  c.windows_command_line = "cmd.exe /d /s /c \"x\"";
  Result res = p.run(c);
  CHECK_FALSE(res.spawned);
  CHECK(res.err.find("cannot run on a POSIX host") != std::string::npos);
}

#if !defined(_WIN32)
namespace {

struct NoRunner : ProcessRunner {
  int calls = 0;
  Result run(const Command&) override {
    ++calls;
    return Result{-1, "", "no processes in this test", false, 0};
  }
};

BuildOptions win_options(bool dry_run, const fs::path& cache) {
  BuildOptions o;
  o.rows = {"sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64"};
  o.source_dir = SAGEBUILD_SOURCE_DIR;
  o.cache_dir = cache;
  o.out_dir = cache / "dist";
  o.launcher = "none";
  o.dry_run = dry_run;
  o.jobs = 1;
  return o;
}

}  // namespace

TEST_CASE("sagebuild build --dry-run plans a win_amd64 row on Linux with placeholders") {
  fs::path cache = fs::temp_directory_path() / ("sb-winplan-" + std::to_string(::getpid()));
  NoRunner r;
  std::ostringstream out;
  int rc = run_build(win_options(true, cache), r, out);
  std::string s = out.str();
  INFO(s);
  CHECK(rc == 0);
  CHECK(r.calls == 0);
  CHECK(s.find("Windows (win_amd64) plan") != std::string::npos);
  CHECK(s.find(R"(<CUDA_PATH>\bin\nvcc.exe -c <SOURCE_DIR>\kernels\src\)") != std::string::npos);
  CHECK(s.find(R"(-ccbin <VCToolsInstallDir>\bin\Hostx64\x64 -std=c++17 -Xcompiler /O2 -Xcompiler /MD)") != std::string::npos);
  CHECK(s.find(R"(<VCToolsInstallDir>\bin\Hostx64\x64\cl.exe /nologo /c <SOURCE_DIR>\kernels\binding\ops.cc)") != std::string::npos);
  CHECK(s.find(R"(\_C.pyd)") != std::string::npos);
  CHECK(s.find(R"(<PYTHON_PREFIX>\libs\python3.lib)") != std::string::npos);
  CHECK(s.find(R"(<CUDA_PATH>\lib\x64\cudart_static.lib)") != std::string::npos);  // families.json: "cudart": "static"
  CHECK(s.find("-allow-unsupported-compiler") == std::string::npos);
  CHECK(s.find(".obj") != std::string::npos);
  CHECK(s.find("-fPIC") == std::string::npos);
  CHECK(s.find(cache.string()) == s.find("cache " + cache.string()) + 6);  // no Linux path in the commands
  fs::remove_all(cache);
}

TEST_CASE("sagebuild build of a win_amd64 row on Linux fails by name before any work") {
  fs::path cache = fs::temp_directory_path() / ("sb-winbuild-" + std::to_string(::getpid()));
  NoRunner r;
  std::ostringstream out;
  int rc = run_build(win_options(false, cache), r, out);
  std::string s = out.str();
  INFO(s);
  CHECK(rc == 1);
  CHECK(s.find("needs a Windows host with Visual Studio") != std::string::npos);
  CHECK(s.find("nvcc") == std::string::npos);
  CHECK_FALSE(fs::exists(cache / "dist"));
  fs::remove_all(cache);
}
#endif

TEST_CASE("windows build.ninja: CreateProcess command lines, escaped paths (golden, placeholder facts)") {
  WindowsRowInput in = win_row();
  in.facts = placeholder_windows_facts();
  WindowsPlanSettings st = settings();
  st.win_repo_root = "<SOURCE_DIR>";
  st.win_objects_dir = R"(C:\cache dir\objects)";
  st.win_work_dir = "<BUILD_DIR>";
  WindowsPlan p = plan_windows_compile({in}, st, false);
  REQUIRE(p.edges.size() == 3);
  const std::string k = p.rows[0].kernels[0].key, b = p.rows[0].binding.key;
  const std::string id = "sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64";
  std::string want =
      "# Generated by sagebuild: the compile graph of one build.  Do not edit;\n"
      "# it is rewritten by every `sagebuild build`.\n"
      "ninja_required_version = 1.10\n"
      "\n"
      "rule run\n"
      "  command = $cmd\n"
      "  description = $desc\n"
      "\n"
      "build C$:\\cache$ dir\\objects\\" + k + ".obj: run <SOURCE_DIR>\\kernels\\src\\quant.cu\n"
      "  cmd = <CUDA_PATH>\\bin\\nvcc.exe -c <SOURCE_DIR>\\kernels\\src\\quant.cu -o \"C:\\cache dir\\objects\\" + k +
      ".obj\" -ccbin <VCToolsInstallDir>\\bin\\Hostx64\\x64 -std=c++17 -Xcompiler /O2 -Xcompiler /MD -Xcompiler /EHsc "
      "-Xcompiler /Zc:preprocessor -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=[sm_90,compute_90] "
      "-I<SOURCE_DIR>\\kernels\\include -O3 --use_fast_math\n"
      "  desc = nvcc quant kernels/src/quant.cu [8.0 9.0] (Windows)\n"
      "build C$:\\cache$ dir\\objects\\" + b + ".obj: run <SOURCE_DIR>\\kernels\\binding\\ops.cc\n"
      "  cmd = <VCToolsInstallDir>\\bin\\Hostx64\\x64\\cl.exe /nologo /c <SOURCE_DIR>\\kernels\\binding\\ops.cc "
      "\"/FoC:\\cache dir\\objects\\" + b + ".obj\" /O2 /MD /EHsc /std:c++17 /Zc:preprocessor "
      "/I<SOURCE_DIR>\\kernels\\include /I<TORCH_DIR>\\include /I<TORCH_DIR>\\include\\torch\\csrc\\api\\include "
      "/I<CUDA_PATH>\\include /I<PYTHON_PREFIX>\\include /DTORCH_EXTENSION_NAME=_C /DPy_LIMITED_API=0x03090000\n"
      "  desc = cl binding kernels/binding/ops.cc [torch 2.7.1] (Windows)\n"
      "build <BUILD_DIR>\\rows\\" + id + "\\_C.pyd: run C$:\\cache$ dir\\objects\\" + k + ".obj C$:\\cache$ dir\\objects\\" +
      b + ".obj\n"
      "  cmd = <VCToolsInstallDir>\\bin\\Hostx64\\x64\\link.exe /nologo /DLL /OUT:<BUILD_DIR>\\rows\\" + id +
      "\\_C.pyd \"C:\\cache dir\\objects\\" + k + ".obj\" \"C:\\cache dir\\objects\\" + b + ".obj\" "
      "<TORCH_DIR>\\lib\\c10.lib <TORCH_DIR>\\lib\\torch.lib <TORCH_DIR>\\lib\\torch_cpu.lib <TORCH_DIR>\\lib\\torch_cuda.lib "
      "<TORCH_DIR>\\lib\\c10_cuda.lib <CUDA_PATH>\\lib\\x64\\cudart.lib <PYTHON_PREFIX>\\libs\\python3.lib\n"
      "  desc = link " + id + "\\_C.pyd (Windows)\n"
      "\n"
      "build " + id + ": phony <BUILD_DIR>\\rows\\" + id + "\\_C.pyd\n"
      "\n"
      "default " + id + "\n";
  std::string got = write_windows_ninja(p.edges, p.rows);
  CHECK(got == want);
  // Every command splits back into its edge's argv under the MSVC runtime's rules.
  for (const auto& e : p.edges) CHECK(got.find(windows_command_line(e)) != std::string::npos);
}
