// The linux_aarch64 cross resolver with a fake runner ([posix]):
// the tools' answers are scripted, the files it looks at are real (a
// temporary directory standing for the cache, the host CUDA and torch's
// unpacked aarch64 wheel); nothing is downloaded.
#include <catch2/catch.hpp>

#include "sagebuild/common/os.h"

#include <filesystem>
#include <functional>
#include <map>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/toolchain/cross_resolver.h"
#include "sagebuild/toolchain/gnu_toolchain.h"
#include "sagebuild/toolchain/host_compiler.h"
#include "sagebuild/toolchain/provision.h"

using namespace sb::toolchain;
namespace fs = std::filesystem;

namespace {

class FakeRunner : public sb::run::ProcessRunner {
 public:
  std::map<std::string, std::function<Result(const Command&)>> answers;  // by file name
  std::vector<Command> seen;
  Result run(const Command& cmd) override {
    seen.push_back(cmd);
    auto it = answers.find(fs::path(cmd.argv.at(0)).filename().string());
    if (it == answers.end()) return Result{127, "", "fake: unexpected " + sb::run::display(cmd), true, 0};
    return it->second(cmd);
  }
};

Result ok(std::string out) { return Result{0, std::move(out), "", true, 0}; }

void touch(const fs::path& p, const std::string& text = "\n") {
  fs::create_directories(p.parent_path());
  sb::write_file_atomic(p, text);
  fs::permissions(p, fs::perms::owner_all);
}

sb::matrix::Row aarch64_row() {
  sb::matrix::Row row;
  row.id = "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_aarch64";
  row.platform = "linux_aarch64";
  row.torch = {2, 11, 0, true};
  row.cuda = *sb::matrix::CudaVersion::parse_release("13.0");
  row.cuda_tag = "cu130";
  row.abi_mode = sb::wheel::AbiMode::abi3;
  row.pythons = {{3, 10}, {3, 11}, {3, 12}, {3, 13}, {3, 14}};
  row.build_python = {3, 12};
  return row;
}

struct Machine {
  fs::path root = fs::temp_directory_path() / ("sb-cross-resolver-test-" + std::to_string(sb::process_id()));
  FakeRunner runner;
  ToolchainOptions opt;
  explicit Machine(bool with_cross_compiler = true) {
    fs::remove_all(root);
    touch(root / "cuda/bin/nvcc", "#!/bin/sh\n");
    touch(root / "bin/python3", "#!/bin/sh\n");
    if (with_cross_compiler) touch(root / "bin/aarch64-linux-gnu-g++", "#!/bin/sh\n");
    runner.answers["nvcc"] = [](const Command&) {
      return ok("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88\n");
    };
    runner.answers["aarch64-linux-gnu-g++"] = [](const Command&) {
      return ok("aarch64-linux-gnu-g++ (Debian 12.2.0-14) 12.2.0\n");
    };
    // The host Python: x86_64, with an x86_64 CPU torch that must not be used.
    // Its headers: one pyconfig.h, as pyenv's (tests turn it into Debian's
    // multiarch wrapper).
    touch(root / "include/python3.11/pyconfig.h", "#define HAVE_UNISTD_H 1\n");
    runner.answers["python3"] = [include = (root / "include/python3.11").string()](const Command&) {
      return ok("{\"version\": [3, 11], \"include\": \"" + include +
                "\", \"has_headers\": true, "
                "\"ext_suffix\": \".cpython-311-x86_64-linux-gnu.so\", \"torch\": {\"version\": \"2.11.0+cu130\", "
                "\"cuda\": \"13.0\", \"cxx11_abi\": true, \"dir\": \"/nonexistent/torch\"}}\n");
    };
    opt.cuda_home = root / "cuda";
    opt.python = root / "bin/python3";
    opt.path_env = (root / "bin").string();
    opt.cache_dir = root / "cache";
    opt.provision = false;
  }
  ~Machine() { fs::remove_all(root); }
  // What a filled cache holds: the cross home and the aarch64 torch.
  void fill_cache() {
    fs::path home = cross_cuda_cache_entry(opt.cache_dir, *sb::matrix::CudaVersion::parse_release("13.0"));
    touch(home / "bin/nvcc", "#!/bin/sh\n");
    for (const auto& f : sbsa_target_files()) touch(home / f);
    sb::matrix::Row row = aarch64_row();
    fs::path t = torch_cache_root(opt.cache_dir, row) / "2.11.0-cu130-0123456789abcdef/torch";
    touch(t / "version.py", "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n");
    touch(t / "include/torch/library.h");
    touch(t / "lib/libc10.so", "NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE");
  }
};

}  // namespace

TEST_CASE("cross: aarch64 CUDA comes from CUDA 13's aarch64 wheels, beside the host's nvcc", "[toolchain][cross]") {
  auto reqs = sbsa_wheel_requirements(*sb::matrix::CudaVersion::parse_release("13.0"));
  CHECK(reqs == std::vector<std::string>{"nvidia-cuda-runtime==13.0.*", "nvidia-cuda-cccl==13.0.*",
                                         "nvidia-cuda-crt==13.0.*", "nvidia-cuda-nvcc==13.0.*"});
  CHECK_THROWS_WITH(sbsa_wheel_requirements(*sb::matrix::CudaVersion::parse_release("12.8")),
                    Catch::Contains("not CUDA 12.8"));
  for (const auto& f : sbsa_target_files()) CHECK(f.rfind("targets/sbsa-linux/", 0) == 0);
  CHECK(cross_cuda_cache_entry("/c", *sb::matrix::CudaVersion::parse_release("13.0")) ==
        fs::path("/c/cuda/13.0-sbsa-linux"));
  // aarch64 torch has its own cache folder: the same release and CUDA tag name both builds.
  sb::matrix::Row row = aarch64_row();
  CHECK(torch_cache_root("/c", row) == fs::path("/c/torch-linux_aarch64"));
  row.platform = "linux_x86_64";
  CHECK(torch_cache_root("/c", row) == fs::path("/c/torch"));
}

TEST_CASE("cross: Debian's cross g++ is recognised; its objects are keyed apart from x86_64's", "[toolchain][cross]") {
  auto id = parse_compiler_version("aarch64-linux-gnu-g++ (Debian 12.2.0-14) 12.2.0\n");
  REQUIRE(id);
  CHECK(id->id == "gcc");
  CHECK(id->major == 12);
  GnuToolchain x86(GnuTools{"/cuda/bin/nvcc", "13.0.88", "/usr/bin/g++", {"gcc", "12.2.0"}});
  GnuToolchain arm(
      GnuTools{"/cuda/bin/nvcc", "13.0.88", "/usr/bin/aarch64-linux-gnu-g++", {"gcc", "12.2.0"}, "aarch64"});
  CHECK(x86.identity() == "nvcc 13.0.88 / gcc 12.2.0");
  CHECK(arm.identity() == "nvcc 13.0.88 / gcc 12.2.0 / aarch64");
  CHECK(arm.platform_tag() == "linux_aarch64");
}

#if !defined(_WIN32)
TEST_CASE("cross: a filled cache resolves to the cross home, aarch64 torch and aarch64 g++",
          "[toolchain][cross][posix]") {
  Machine m;
  m.fill_cache();
  CrossResolver r(m.runner, m.opt);
  RowToolchain t = r.resolve(aarch64_row(), std::nullopt);
  fs::path home = cross_cuda_cache_entry(m.opt.cache_dir, *sb::matrix::CudaVersion::parse_release("13.0"));
  CHECK(t.host->platform_tag() == "linux_aarch64");
  CHECK(t.cuda_include == home / "targets/sbsa-linux/include");
  CHECK(t.cuda_lib == home / "targets/sbsa-linux/lib");
  CHECK(t.torch.root.string().find("torch-linux_aarch64") != std::string::npos);
  CHECK_FALSE(t.torch_importable);  // nothing aarch64 runs here
  CHECK_FALSE(t.smoke_python);
  CHECK(t.host->host_compiler().version == "12.2.0");
  // No pip ran: nothing was downloaded.
  for (const auto& c : m.runner.seen)
    for (const auto& a : c.argv) CHECK(a != "download");
}

TEST_CASE("cross: what is missing is named with its fix", "[toolchain][cross][posix]") {
  SECTION("no aarch64-linux-gnu-g++") {
    Machine m(false);
    m.fill_cache();
    CrossResolver r(m.runner, m.opt);
    CHECK_THROWS_WITH(r.resolve(aarch64_row(), std::nullopt),
                      Catch::Contains("aarch64-linux-gnu-g++ not found") && Catch::Contains("g++-aarch64-linux-gnu"));
  }
  SECTION("a per-interpreter row") {
    Machine m;
    m.fill_cache();
    CrossResolver r(m.runner, m.opt);
    sb::matrix::Row row = aarch64_row();
    row.abi_mode = sb::wheel::AbiMode::per_interpreter;
    CHECK_THROWS_WITH(r.resolve(row, std::nullopt), Catch::Contains("abi3 rows only"));
  }
  SECTION("Debian's multiarch pyconfig.h without libpython3.11-dev:arm64") {
    Machine m;
    m.fill_cache();
    touch(m.root / "include/python3.11/pyconfig.h",
          "#if defined(__x86_64__) && defined(__LP64__)\n# include <x86_64-linux-gnu/python3.11/pyconfig.h>\n"
          "#elif defined(__aarch64__) && defined(__AARCH64EL__)\n# include <aarch64-linux-gnu/python3.11/pyconfig.h>\n"
          "#endif\n");
    CrossResolver r(m.runner, m.opt);
    CHECK_THROWS_WITH(r.resolve(aarch64_row(), std::nullopt),
                      Catch::Contains("aarch64-linux-gnu/python3.11/pyconfig.h is missing") &&
                          Catch::Contains("libpython3.11-dev:arm64") &&
                          Catch::Contains("dpkg --add-architecture arm64"));
    // With the aarch64 header beside it, the headers pass.
    touch(m.root / "include/aarch64-linux-gnu/python3.11/pyconfig.h", "#define HAVE_UNISTD_H 1\n");
    bool python_ok = false;
    for (const auto& c : r.diagnose(aarch64_row()))
      if (c.what == "Python headers (abi3)" && c.ok) python_ok = true;
    CHECK(python_ok);
  }
  SECTION("a dry run plans the downloads instead") {
    Machine m;
    CrossResolver r(m.runner, m.opt);
    auto checks = r.diagnose(aarch64_row());
    bool planned_torch = false, planned_cuda = false;
    for (const auto& c : checks) {
      if (c.found.find("to be provisioned: pip download --no-deps --platform manylinux_2_28_aarch64") !=
          std::string::npos)
        planned_torch = true;
      if (c.found.find("to be provisioned from NVIDIA's aarch64 wheels") != std::string::npos) planned_cuda = true;
    }
    CHECK(planned_torch);
    CHECK(planned_cuda);
  }
}
#endif
