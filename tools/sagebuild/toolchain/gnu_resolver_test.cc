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
  std::map<std::string, std::function<Result(const Command&)>> answers;
  std::vector<Command> seen;
  Result run(const Command& cmd) override {
    seen.push_back(cmd);
    auto it = answers.find(fs::path(cmd.argv.at(0)).filename().string());
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
    opt.provision = false;
  }
  ~Machine() { fs::remove_all(root); }
};

sb::matrix::Row row() {
  sb::matrix::Row r;
  r.id = "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64";
  r.abi_mode = sb::matrix::AbiMode::abi3;
  r.torch = "2.11.0";
  r.cuda = "13.0";
  r.pythons = {"3.10", "3.11"};
  r.build_python = "3.10";
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
  CHECK_THROWS_WITH(res.resolve(row(), std::nullopt), Catch::Contains("gcc 16.1.0 is not supported by CUDA 13.0"));
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
  r.build_python = "3.12";
  GnuResolver res(m.runner, m.opt);
  CHECK_THROWS_WITH(res.resolve(r, std::nullopt), Catch::Contains("python3.12 not found"));
}
