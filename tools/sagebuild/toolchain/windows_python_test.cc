// The Windows build Python: the query script (run here by the Linux python3
// against a torch tree laid out as a Windows wheel installs it, so the script
// itself is exercised), its answer parsed, and the row's needs checked.  The
// Windows answers below are written by hand in the script's format with the
// paths of a python.org install; none was recorded on a Windows machine.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sagebuild/common/os.h"

#include "sagebuild/common/error.h"
#include "sagebuild/toolchain/torch.h"
#include "sagebuild/toolchain/windows_python.h"

using namespace sb::toolchain;
namespace fs = std::filesystem;

namespace {

// Spread over lines here for reading; the script prints it on one line.
const char* kAnswerLines = R"({"executable": "C:\\hostedtoolcache\\windows\\Python\\3.12.10\\x64\\python.exe",
 "version": [3, 12], "include": "C:\\hostedtoolcache\\windows\\Python\\3.12.10\\x64\\Include",
 "libs_dir": "C:\\hostedtoolcache\\windows\\Python\\3.12.10\\x64\\libs", "has_python_h": true,
 "libs": ["_tkinter.lib", "python3.lib", "python312.lib"],
 "torch": {"root": "C:\\py\\Lib\\site-packages\\torch", "lib_dir": "C:\\py\\Lib\\site-packages\\torch\\lib",
  "version_py": "__version__ = '2.7.1+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\ngit_version = 'e2d141dbde55c2a4370fac5165b0561b6af4798b'\nhip: Optional[str] = None\n",
  "libs": ["asmjit.lib", "c10.lib", "c10_cuda.lib", "torch.lib", "torch_cpu.lib", "torch_cuda.lib", "torch_python.lib"],
  "include_dirs": ["C:\\py\\Lib\\site-packages\\torch\\include",
                   "C:\\py\\Lib\\site-packages\\torch\\include\\torch\\csrc\\api\\include"]}})";

const std::string kAnswer = [] {
  std::string s = kAnswerLines;
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}();

sb::matrix::Row row(sb::matrix::AbiMode abi = sb::matrix::AbiMode::abi3) {
  sb::matrix::Row r;
  r.id = "sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64";
  r.abi_mode = abi;
  r.torch = {2, 7, 1, true};
  r.cuda = {12, 8};
  r.build_python = {3, 12};
  r.platform = "win_amd64";
  return r;
}

struct FakeRunner : ProcessRunner {
  Result answer;
  std::vector<Command> seen;
  Result run(const Command& c) override {
    seen.push_back(c);
    return answer;
  }
};

}  // namespace

TEST_CASE("windows python: the answer parsed, torch's version.py read") {
  auto f = parse_windows_python_query(std::string("import chatter\n") + kAnswer + "\r\n", "python");
  CHECK(f.executable == R"(C:\hostedtoolcache\windows\Python\3.12.10\x64\python.exe)");
  CHECK(f.version() == "3.12");
  CHECK(f.has_python_h);
  CHECK(f.libs_dir == R"(C:\hostedtoolcache\windows\Python\3.12.10\x64\libs)");
  REQUIRE(f.torch);
  CHECK(f.torch->version == "2.7.1+cu128");
  CHECK(f.torch->cuda == "12.8");
  CHECK(f.torch->lib_dir == R"(C:\py\Lib\site-packages\torch\lib)");
  CHECK(f.torch->include_dirs.size() == 2);
  CHECK_NOTHROW(check_windows_python(f, row(), sb::toolchain::torch_link_libraries(false)));
  CHECK_THROWS_WITH(parse_windows_python_query("Traceback (most recent call last):\n", "C:\\py\\python.exe"),
                    Catch::Contains("C:\\py\\python.exe") && Catch::Contains("Traceback"));
}

TEST_CASE("windows python: every missing piece is named, with its fix") {
  auto f = parse_windows_python_query(kAnswer, "python");
  f.has_python_h = false;
  f.libs = {"python312.lib"};
  f.torch->cuda = "12.6";
  f.torch->libs = {"c10.lib", "torch.lib"};
  try {
    check_windows_python(f, row(), sb::toolchain::torch_link_libraries(false));
    FAIL("expected a UsageError");
  } catch (const sb::UsageError& e) {
    std::string m = e.what();
    CHECK(m.find("no Python.h") != std::string::npos);
    CHECK(m.find("no python3.lib in C:\\hostedtoolcache") != std::string::npos);
    CHECK(m.find("built for CUDA 12.6; row sageattention-2.2.0-torch2.7.1-cu128-abi3-win_amd64 needs its CUDA 12.8") !=
          std::string::npos);
    CHECK(m.find("lacks c10_cuda.lib, torch_cpu.lib, torch_cuda.lib") != std::string::npos);
  }
  // Per-interpreter rows need python3X.lib of the row's Python, from that Python.
  auto g = parse_windows_python_query(kAnswer, "python");
  auto r = row(sb::matrix::AbiMode::per_interpreter);
  CHECK_NOTHROW(check_windows_python(g, r, {"c10"}));
  r.build_python = {3, 11};
  CHECK_THROWS_WITH(check_windows_python(g, r, {"c10"}),
                    Catch::Contains("is Python 3.12") && Catch::Contains("no python311.lib"));
  g.torch.reset();
  CHECK_THROWS_WITH(check_windows_python(g, row(), {"c10"}), Catch::Contains("has no torch package"));
  g = parse_windows_python_query(kAnswer, "python");
  g.torch->version = "2.8.0+cu128";
  CHECK_THROWS_WITH(check_windows_python(g, row(), {"c10"}), Catch::Contains("needs torch 2.7.1"));
  g.torch->version = "2.7.1+cpu";
  g.torch->cuda = "";
  CHECK_THROWS_WITH(check_windows_python(g, row(), {"c10"}), Catch::Contains("is a CPU build"));
}

TEST_CASE("windows python: the query goes through the runner, failures say which Python") {
  FakeRunner r;
  r.answer = Result{0, kAnswer, "", true, 0};
  auto f = query_windows_python(r, "C:\\py\\python.exe");
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].argv.size() == 3);
  CHECK(r.seen[0].argv[0] == "C:\\py\\python.exe");
  CHECK(r.seen[0].argv[1] == "-c");
  CHECK(f.torch);
  r.answer = Result{-1, "", "program not found: python", false, 0};
  CHECK_THROWS_WITH(query_windows_python(r, "python"), Catch::Contains("--python"));
  r.answer = Result{1, "", "SyntaxError", true, 0};
  CHECK_THROWS_WITH(query_windows_python(r, "python"), Catch::Contains("exit 1") && Catch::Contains("SyntaxError"));
}

TEST_CASE("windows python: the query script itself, run by this host's python3 on a torch tree") {
  auto py = sb::run::find_program("python3");
  if (!py) {
    WARN("python3 not on PATH: the query script is not run here");
    return;
  }
  fs::path site = fs::temp_directory_path() / ("sb-winpy-" + std::to_string(sb::process_id()));
  fs::create_directories(site / "torch/lib");
  fs::create_directories(site / "torch/include/torch/csrc/api/include");
  std::ofstream(site / "torch/__init__.py") << "raise ImportError('the query must not import torch')\n";
  std::ofstream(site / "torch/version.py") << "__version__ = '2.7.1+cu128'\ncuda: Optional[str] = '12.8'\n";
  for (const char* lib : {"c10.lib", "C10_CUDA.LIB", "torch.lib", "torch_cpu.lib", "torch_cuda.lib", "c10.dll"})
    std::ofstream(site / "torch/lib" / lib) << "";
  sb::run::HostProcessRunner runner;
  sb::run::Command c{{py->string(), "-c", std::string(windows_python_query_script())}};
  c.env["PYTHONPATH"] = site.string();
  sb::run::Result r = runner.run(c);
  INFO(r.err);
  REQUIRE(r.ok());
  auto f = parse_windows_python_query(r.out, py->string());
  REQUIRE(f.torch);
  CHECK(fs::path(f.torch->root) == site / "torch");
  CHECK(f.torch->version == "2.7.1+cu128");
  CHECK(f.torch->cuda == "12.8");
  CHECK(f.torch->libs ==
        std::vector<std::string>{"C10_CUDA.LIB", "c10.lib", "torch.lib", "torch_cpu.lib", "torch_cuda.lib"});
  CHECK(f.torch->include_dirs.size() == 2);
  CHECK(f.major == 3);
  fs::remove_all(site);
}
