// The Linux toolchain resolver with a fake runner ([posix]: it looks for
// programs on a POSIX PATH, so the Windows run of the suites leaves it out): what each tool answers is
// scripted, the files it looks at are real (in a temporary directory).
#include <catch2/catch.hpp>

#include "sagebuild/common/os.h"

#include <filesystem>
#include <functional>
#include <map>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/toolchain/gnu_resolver.h"

using namespace sb::toolchain;
namespace fs = std::filesystem;

namespace {

// Answers by program file name; records every command.
class FakeRunner : public sb::run::ProcessRunner {
 public:
  std::map<std::string, std::function<Result(const Command&)>> answers;  // by file name, or by full path
  std::vector<Command> seen;
  sb::run::ProcessRunner* real_compilers = nullptr;  // runs every *++* program for real when set
  Result run(const Command& cmd) override {
    seen.push_back(cmd);
    if (real_compilers && cmd.argv.at(0).find("++") != std::string::npos) return real_compilers->run(cmd);
    auto it = answers.find(cmd.argv.at(0));
    if (it == answers.end()) it = answers.find(fs::path(cmd.argv.at(0)).filename().string());
    if (it == answers.end()) return Result{127, "", "fake: unexpected " + sb::run::display(cmd), true, 0};
    return it->second(cmd);
  }
};

Result ok(std::string out) { return Result{0, std::move(out), "", true, 0}; }

struct Machine {
  // Per process: CTest runs each test case as its own process, in parallel,
  // and other checkouts on the machine run the same tests.
  fs::path root = fs::temp_directory_path() / ("sb-build-toolchain-test-" + std::to_string(sb::process_id()));
  FakeRunner runner;
  ToolchainOptions opt;

  explicit Machine(const std::string& nvcc_release = "13.0, V13.0.88", const std::string& gcc = "12.2.0",
                   const std::string& torch_cuda = "13.0") {
    fs::remove_all(root);
    for (const char* exe : {"cuda/bin/nvcc", "bin/python3", "bin/c++"}) {
      fs::create_directories((root / exe).parent_path());
      sb::write_file_atomic(root / exe, "#!/bin/sh\n");
      fs::permissions(root / exe, fs::perms::owner_all);
    }
    fs::path t = root / "site/torch";
    fs::create_directories(t / "include/torch");
    fs::create_directories(t / "lib");
    sb::write_file_atomic(t / "version.py",
                          "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '" + torch_cuda + "'\n");
    sb::write_file_atomic(t / "include/torch/library.h", "\n");
    sb::write_file_atomic(t / "lib/libc10.so", "NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE");
    runner.answers["nvcc"] = [nvcc_release](const Command&) {
      return ok("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release " + nvcc_release + "\n");
    };
    runner.answers["c++"] = [gcc](const Command&) { return ok("c++ (Debian " + gcc + "-14) " + gcc + "\n"); };
    std::string tdir = t.string();
    runner.answers["python3"] = [tdir, torch_cuda](const Command&) {
      return ok(
          "{\"version\": [3, 11], \"include\": \"/usr/include/python3.11\", \"has_headers\": true, "
          "\"ext_suffix\": \".cpython-311-x86_64-linux-gnu.so\", \"torch\": {\"version\": \"2.11.0+cu130\", "
          "\"cuda\": \"" +
          torch_cuda + "\", \"cxx11_abi\": true, \"dir\": \"" + tdir + "\"}}\n");
    };
    opt.cuda_home = root / "cuda";
    opt.python = root / "bin/python3";
    opt.path_env = (root / "bin").string();
    opt.cache_dir = root / "cache";
    opt.gcc_toolset_root = root / "opt/rh";
    opt.provision = false;
  }
  // An executable script at `rel` under root that prints `banner` (a
  // compiler's --version), answered by the fake runner too.
  fs::path compiler(const std::string& rel, const std::string& banner) {
    fs::path p = root / rel;
    fs::create_directories(p.parent_path());
    sb::write_file_atomic(p, "#!/bin/sh\necho '" + banner + "'\n");
    fs::permissions(p, fs::perms::owner_all);
    runner.answers[p.string()] = [banner](const Command&) { return ok(banner + "\n"); };
    return p;
  }
  ~Machine() { fs::remove_all(root); }
};

sb::matrix::Row row() {
  sb::matrix::Row r;
  r.id = "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64";
  r.abi_mode = sb::matrix::AbiMode::abi3;
  r.torch = {2, 11, 0, true};
  r.cuda = {13, 0};
  r.pythons = {{3, 10}, {3, 11}};
  r.build_python = {3, 10};
  r.platform = "linux_x86_64";
  return r;
}

}  // namespace

TEST_CASE("a complete toolchain is resolved from what the tools answer", "[posix]") {
  Machine m;
  GnuResolver res(m.runner, m.opt);
  RowToolchain tc = res.resolve(row(), std::nullopt);
  CHECK(tc.nvcc_version == "13.0.88");
  CHECK(tc.torch.version == "2.11.0+cu130");
  CHECK(tc.row_torch_cuda == "13.0");
  CHECK(tc.host->host_compiler().id == "gcc");
  CHECK(tc.host->identity() == "nvcc 13.0.88 / gcc 12.2.0");
  CHECK(tc.host->platform_tag() == "linux_x86_64");
  CHECK(tc.torch_importable);  // the smoke test can import torch
  CHECK(tc.torch.cxx11_abi);
  CHECK(tc.torch.root == m.root / "site/torch");
  CHECK(tc.cuda_include == m.root / "cuda/include");
  CHECK(&res.build_runner() == &m.runner);
  bool cuda_from_flag = false;
  for (const auto& c : tc.checks)
    cuda_from_flag |= c.what == "CUDA 13.0" && c.found.find("(--cuda-home)") != std::string::npos;
  CHECK(cuda_from_flag);
}

TEST_CASE("nvcc of another version is an error that says how to fix it", "[posix]") {
  Machine m("12.8, V12.8.93");
  GnuResolver res(m.runner, m.opt);
  try {
    res.resolve(row(), std::nullopt);
    FAIL("expected UsageError");
  } catch (const sb::UsageError& e) {
    std::string msg = e.what();
    CHECK(msg.find("nvcc 12.8.93, the row needs CUDA 13.0") != std::string::npos);
    CHECK(msg.find("fix: point --cuda-home at a CUDA 13.0 toolkit") != std::string::npos);
  }
}

TEST_CASE("a torch built for another CUDA is refused before anything compiles", "[posix]") {
  Machine m("13.0, V13.0.88", "12.2.0", "12.8");
  GnuResolver res(m.runner, m.opt);
  CHECK_THROWS_WITH(res.resolve(row(), std::nullopt), Catch::Contains("built for CUDA 12.8"));
  for (const auto& c : m.runner.seen) CHECK(c.argv.at(0).find("ninja") == std::string::npos);
}

TEST_CASE("a host compiler newer than the CUDA release supports is refused", "[posix]") {
  Machine m("13.0, V13.0.88", "16.1.0");
  GnuResolver res(m.runner, m.opt);
  CHECK_THROWS_WITH(res.resolve(row(), std::nullopt),
                    Catch::Contains("c++ is gcc 16.1.0, outside CUDA 13.0's gcc up to 15") &&
                        Catch::Contains("install gcc 15: `dnf install gcc-toolset-15-gcc-c++`"));
}

namespace {

// A CUDA 12.6 row, whose nvcc takes gcc up to 13, on a machine whose c++ is
// gcc 14 (the manylinux_2_28 image's).
sb::matrix::Row row_126() {
  auto r = row();
  r.id = "sageattention-2.2.0-torch2.11.0-cu126-abi3-linux_x86_64";
  r.cuda = {12, 6};
  return r;
}

std::string host_check(const std::vector<Check>& checks) {
  for (const auto& c : checks)
    if (c.what.rfind("host compiler", 0) == 0) return std::string(c.ok ? "ok: " : "FAIL: ") + c.found + " | " + c.fix;
  return "none";
}

}  // namespace

TEST_CASE("a default compiler the row's CUDA refuses gives way to the newest accepted g++-N on PATH", "[posix]") {
  Machine m("12.6, V12.6.85", "14.2.1", "12.6");
  m.compiler("bin/g++-14", "g++-14 (Debian 14.2.0-3) 14.2.0");
  m.compiler("bin/g++-13", "g++-13 (Debian 13.3.0-1) 13.3.0");
  m.compiler("bin/g++-11", "g++-11 (Debian 11.4.0-1) 11.4.0");
  GnuResolver res(m.runner, m.opt);
  RowToolchain tc = res.resolve(row_126(), std::nullopt);
  CHECK(tc.host->identity() == "nvcc 12.6.85 / gcc 13.3.0");
  CHECK_THAT(host_check(tc.checks), Catch::StartsWith("ok: " + (m.root / "bin/g++-13").string() + " (gcc 13.3.0); ") &&
                                        Catch::Contains("c++ is gcc 14.2.1, which CUDA 12.6 refuses"));
}

TEST_CASE("gcc-toolset-N (manylinux_2_28's) is found when PATH has none the CUDA accepts", "[posix]") {
  Machine m("12.6, V12.6.85", "14.2.1", "12.6");
  m.compiler("opt/rh/gcc-toolset-14/root/usr/bin/g++", "g++ (GCC) 14.2.1 20240801 (Red Hat 14.2.1-1)");
  m.compiler("opt/rh/gcc-toolset-13/root/usr/bin/g++", "g++ (GCC) 13.3.1 20240611 (Red Hat 13.3.1-2)");
  m.compiler("opt/rh/gcc-toolset-12/root/usr/bin/g++", "g++ (GCC) 12.2.1 20221121 (Red Hat 12.2.1-7)");
  GnuResolver res(m.runner, m.opt);
  RowToolchain tc = res.resolve(row_126(), std::nullopt);
  CHECK(tc.host->identity() == "nvcc 12.6.85 / gcc 13.3.1");
  CHECK_THAT(host_check(tc.checks), Catch::Contains((m.root / "opt/rh/gcc-toolset-13/root/usr/bin/g++").string()));
}

TEST_CASE("no accepted compiler anywhere: refused, naming the gcc to install", "[posix]") {
  Machine m("12.6, V12.6.85", "14.2.1", "12.6");
  m.compiler("bin/g++-14", "g++-14 (Debian 14.2.0-3) 14.2.0");
  m.compiler("opt/rh/gcc-toolset-14/root/usr/bin/g++", "g++ (GCC) 14.2.1 20240801 (Red Hat 14.2.1-1)");
  GnuResolver res(m.runner, m.opt);
  CHECK_THROWS_WITH(res.resolve(row_126(), std::nullopt),
                    Catch::Contains("c++ is gcc 14.2.1, outside CUDA 12.6's gcc up to 13 (per crt/host_config.h") &&
                        Catch::Contains("install gcc 13: `dnf install gcc-toolset-13-gcc-c++` (manylinux_2_28, "
                                        "RHEL) or `apt-get install g++-13` (Debian, Ubuntu)"));
  CHECK_THAT(host_check(res.diagnose(row_126())), Catch::StartsWith("FAIL: "));
}

TEST_CASE("a default compiler the CUDA accepts is kept, and no other is asked", "[posix]") {
  Machine m("12.6, V12.6.85", "12.2.0", "12.6");
  m.compiler("bin/g++-13", "g++-13 (Debian 13.3.0-1) 13.3.0");
  GnuResolver res(m.runner, m.opt);
  RowToolchain tc = res.resolve(row_126(), std::nullopt);
  CHECK(tc.host->identity() == "nvcc 12.6.85 / gcc 12.2.0");
  for (const auto& c : m.runner.seen) CHECK(c.argv.at(0).find("g++-13") == std::string::npos);
}

TEST_CASE("the --host-compiler option is taken as given, never replaced", "[posix]") {
  Machine m("12.6, V12.6.85", "12.2.0", "12.6");
  fs::path g14 = m.compiler("bin/g++-14", "g++-14 (Debian 14.2.0-3) 14.2.0");
  m.compiler("bin/g++-13", "g++-13 (Debian 13.3.0-1) 13.3.0");
  m.opt.host_compiler = g14;
  GnuResolver res(m.runner, m.opt);
  CHECK_THROWS_WITH(res.resolve(row_126(), std::nullopt), Catch::Contains("gcc 14.2.0 is not supported by CUDA 12.6"));
}

TEST_CASE("the search runs the real compilers: this host's g++-N answers for itself", "[posix]") {
  auto real = sb::run::find_program("g++-12", "/usr/bin");
  if (!real) {  // Debian 12's gcc; install-deps.sh installs it
    WARN("SKIPPED: no /usr/bin/g++-12 here");
    return;
  }
  Machine m("12.6, V12.6.85", "14.2.1", "12.6");
  sb::run::HostProcessRunner host;
  m.runner.real_compilers = &host;
  m.compiler("bin/c++", "c++ (GCC) 14.2.1 20240801");  // a script run for real
  m.opt.path_env = (m.root / "bin").string() + ":/usr/bin";
  GnuResolver res(m.runner, m.opt);
  RowToolchain tc = res.resolve(row_126(), std::nullopt);
  CHECK_THAT(tc.host->identity(), Catch::StartsWith("nvcc 12.6.85 / gcc 12."));
  CHECK_THAT(host_check(tc.checks), Catch::StartsWith("ok: /usr/bin/g++-12 (gcc 12."));
}

TEST_CASE("doctor lists every check without throwing", "[posix]") {
  Machine m("12.8, V12.8.93");
  GnuResolver res(m.runner, m.opt);
  auto checks = res.diagnose(row());
  int bad = 0;
  for (const auto& c : checks) bad += !c.ok;
  CHECK(bad == 1);  // only CUDA
  CHECK(checks.size() == 4);
}

TEST_CASE("per-interpreter rows need that Python's headers", "[posix]") {
  Machine m;
  auto r = row();
  r.abi_mode = sb::matrix::AbiMode::per_interpreter;
  r.build_python = {3, 12};
  GnuResolver res(m.runner, m.opt);
  CHECK_THROWS_WITH(res.resolve(r, std::nullopt), Catch::Contains("python3.12 not found"));
}
