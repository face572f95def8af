// Every wheel the pack writer makes passes verify with no Error or Strict
// finding, and verify's B rules catch a wheel whose parts disagree.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <set>
#include "sagebuild/common/os.h"

#include "sagebuild/common/fs.h"
#include "sagebuild/pack/wheel_writer.h"
#include "sagebuild/verify/verify.h"

using namespace sb;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("sb-roundtrip-" + std::to_string(sb::process_id()) + "-" + std::to_string(counter()++));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// A real shared library from the host C compiler (only libc imports), or
// empty when no compiler is available.
std::string host_library() {
  static const std::string bytes = [] {
    TempDir dir;
    write_file_atomic(dir.path / "m.c", "#include <string.h>\nint sb_len(const char* s) { return (int)strlen(s); }\n");
    std::string cmd = "cc -shared -fPIC -O1 " + (dir.path / "m.c").string() + " -o " + (dir.path / "m.so").string() +
                      " 2>/dev/null";
    return std::system(cmd.c_str()) == 0 ? read_file(dir.path / "m.so") : std::string();
  }();
  return bytes;
}

distinfo::BuildInfo build_info(bool abi3) {
  distinfo::BuildInfo b;
  b.package = "sageattention";
  b.version = "2.2.0";
  b.abi_mode = abi3 ? sb::wheel::AbiMode::abi3 : sb::wheel::AbiMode::per_interpreter;
  b.pythons = abi3 ? std::vector<std::string>{"3.9", "3.10", "3.11", "3.12", "3.13"} : std::vector<std::string>{"3.12"};
  b.wheel = {abi3 ? std::optional<std::string>("21100.130") : std::nullopt,
             abi3 ? std::nullopt : std::optional<std::string>("cu128torch2.9.0"), abi3 ? "cp39" : "cp312",
             abi3 ? "abi3" : "cp312", "manylinux_2_28_x86_64"};
  b.torch = abi3 ? distinfo::BuildInfo::Torch{"2.11.0", true, "13.0"} : distinfo::BuildInfo::Torch{"2.9.0", true, "12.8"};
  b.cuda = abi3 ? distinfo::BuildInfo::Cuda{"13.0", "13.0.88"} : distinfo::BuildInfo::Cuda{"12.8", "12.8.93"};
  // No CUDA code in a host-compiled library, so no archs are promised (B6 is
  // tested on fatbin data in binary_rules_test.cc).
  b.host_compiler = {"gcc", "12.2.0"};
  b.platform = b.wheel.platform_tag;
  b.source_revision = "0123456789abcdef0123456789abcdef01234567";
  return b;
}

pack::WheelSpec wheel_spec(const distinfo::BuildInfo& b, const fs::path& license) {
  pack::WheelSpec s;
  s.name = "sageattention";
  s.version = *wheel::parse_version(b.version + (b.wheel.local_version ? "+" + *b.wheel.local_version : ""));
  s.build_tag = b.wheel.build_tag;
  s.tags = {{b.wheel.python_tag}, {b.wheel.abi_tag}, {b.wheel.platform_tag}};
  s.summary = "Quantized attention for PyTorch";
  s.requires_python = ">=3.9";
  s.requires_dist = {"torch==" + b.torch.version, "numpy>=1.22; python_version >= \"3.9\""};
  s.license_expression = "Apache-2.0";
  s.license_file = license;
  s.project_urls = {{"Source", "https://github.com/thu-ml/SageAttention"}};
  s.description = "# SageAttention\n\nQuantized attention.\n";
  s.description_content_type = "text/markdown";
  s.build_info = b;
  return s;
}

verify::Report pack_and_verify(pack::WheelSpec spec, const std::string& so_name, const TempDir& dir) {
  std::vector<pack::PayloadFile> payload = {
      {"sageattention/__init__.py", std::string("from .core import *\n"), std::nullopt},
      {"sageattention/core.py", std::string("def sageattn(q, k, v):\n    return q\n"), std::nullopt},
      {"sageattention/" + so_name, host_library(), std::nullopt}};
  auto result = pack::write_wheel(spec, payload, {dir.path, 0});
  verify::Options o;
  o.policy_dir = fs::path(SAGEBUILD_CORPUS_DIR) / "reference";
  return verify::verify_wheel(result.path, o);
}

std::string listing(const verify::Report& r) { return verify::format_human(r, false); }

}  // namespace

TEST_CASE("round trip: abi3 wheel with build tag passes with no errors or strict findings", "[posix]") {
  if (host_library().empty()) FAIL("no C compiler (cc) to build the sample extension");
  TempDir dir;
  write_file_atomic(dir.path / "LICENSE", "Apache License\n");
  auto r = pack_and_verify(wheel_spec(build_info(true), dir.path / "LICENSE"), "_C.abi3.so", dir);
  INFO(listing(r));
  CHECK(r.has_build_info);
  CHECK(r.count(Severity::Error) == 0);
  CHECK(r.count(Severity::Strict) == 0);
  CHECK(r.count(Severity::Warning) == 0);
  CHECK(r.hashed_bytes > host_library().size());
}

TEST_CASE("round trip: per-interpreter wheel with local version passes too", "[posix]") {
  if (host_library().empty()) FAIL("no C compiler (cc) to build the sample extension");
  TempDir dir;
  write_file_atomic(dir.path / "LICENSE", "Apache License\n");
  auto r = pack_and_verify(wheel_spec(build_info(false), dir.path / "LICENSE"),
                           "_C.cpython-312-x86_64-linux-gnu.so", dir);
  INFO(listing(r));
  CHECK(r.has_build_info);
  CHECK(r.count(Severity::Error) == 0);
  CHECK(r.count(Severity::Strict) == 0);
}

TEST_CASE("round trip: B rules catch parts that disagree", "[posix]") {
  TempDir dir;
  write_file_atomic(dir.path / "LICENSE", "L\n");
  auto rules_of = [](const verify::Report& r) {
    std::set<std::string> s;
    for (const auto& f : r.findings)
      if (f.severity != Severity::Warning) s.insert(f.rule);
    return s;
  };
  auto b = build_info(true);
  auto spec = wheel_spec(b, dir.path / "LICENSE");
  spec.requires_dist = {"torch>=2.8"};  // not the exact pin
  CHECK(rules_of(pack_and_verify(spec, "_C.abi3.so", dir)) == std::set<std::string>{"B4"});

  spec = wheel_spec(b, dir.path / "LICENSE");
  spec.build_tag = "280.129";  // says torch 2.8.0 / CUDA 12.9
  CHECK(rules_of(pack_and_verify(spec, "_C.abi3.so", dir)) == std::set<std::string>{"B2"});

  spec = wheel_spec(b, dir.path / "LICENSE");
  spec.tags = {{"cp310"}, {"abi3"}, {"manylinux_2_28_x86_64"}};
  CHECK(rules_of(pack_and_verify(spec, "_C.abi3.so", dir)) == std::set<std::string>{"B3"});

  spec = wheel_spec(b, dir.path / "LICENSE");  // a version-specific module in an abi3 wheel
  CHECK(rules_of(pack_and_verify(spec, "_C.cpython-312-x86_64-linux-gnu.so", dir)) == std::set<std::string>{"P10"});

  spec = wheel_spec(b, dir.path / "LICENSE");
  spec.tags = {{"cp39"}, {"abi3"}, {"manylinux_2_28_aarch64"}};  // x86-64 code
  spec.build_info->wheel.platform_tag = spec.build_info->platform = "manylinux_2_28_aarch64";
  // ... and its GLIBC_2.2.5 (the x86-64 baseline) is no aarch64 symbol version: P2 too.
  CHECK(rules_of(pack_and_verify(spec, "_C.abi3.so", dir)) == std::set<std::string>{"P1", "P2"});
}
