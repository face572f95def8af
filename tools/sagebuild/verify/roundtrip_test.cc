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
#include "sagebuild/wheel/torch_requirement.h"

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
    std::string cmd =
        "cc -shared -fPIC -O1 " + (dir.path / "m.c").string() + " -o " + (dir.path / "m.so").string() + " 2>/dev/null";
    return std::system(cmd.c_str()) == 0 ? read_file(dir.path / "m.so") : std::string();
  }();
  return bytes;
}

// Libraries that link torch as the two bindings do, from the host compiler:
// the stable ABI's C shim (aoti_torch_*), or torch's C++ symbols (at::). The
// symbols stay undefined (resolved by torch at load time, as in our wheels).
std::string torch_library(wheel::TorchBinding binding) {
  TempDir dir;
  bool stable = binding == wheel::TorchBinding::stable_abi;
  write_file_atomic(
      dir.path / "m.cc",
      stable ? "extern \"C\" int aoti_torch_get_device_type(void*, int*);\n"
               "extern \"C\" int sb_device(void* t) { int d = 0; aoti_torch_get_device_type(t, &d); return d; }\n"
             : "namespace at { int sb_device_of(void*); }\n"
               "extern \"C\" int sb_device(void* t) { return at::sb_device_of(t); }\n");
  std::string cmd =
      "c++ -shared -fPIC -O1 " + (dir.path / "m.cc").string() + " -o " + (dir.path / "m.so").string() + " 2>/dev/null";
  return std::system(cmd.c_str()) == 0 ? read_file(dir.path / "m.so") : std::string();
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
  b.torch =
      abi3 ? distinfo::BuildInfo::Torch{"2.11.0", true, "13.0"} : distinfo::BuildInfo::Torch{"2.9.0", true, "12.8"};
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
  // As the matrix writes it: a stable-ABI build (torch 2.11) takes every
  // torch from 2.10 on, a classic one (2.9) its minor release.
  s.requires_dist = {b.torch.version == "2.11.0" ? "torch>=2.10,<3" : "torch==2.9.*",
                     "numpy>=1.22; python_version >= \"3.9\""};
  s.license_expression = "Apache-2.0";
  s.license_file = license;
  s.project_urls = {{"Source", "https://github.com/thu-ml/SageAttention"}};
  s.description = "# SageAttention\n\nQuantized attention.\n";
  s.description_content_type = "text/markdown";
  s.build_info = b;
  return s;
}

verify::Report pack_and_verify(pack::WheelSpec spec, const std::string& so_name, const TempDir& dir,
                               const std::string& library = host_library()) {
  std::vector<pack::PayloadFile> payload = {
      {"sageattention/__init__.py", std::string("from .core import *\n"), std::nullopt},
      {"sageattention/core.py", std::string("def sageattn(q, k, v):\n    return q\n"), std::nullopt},
      {"sageattention/" + so_name, library, std::nullopt}};
  auto result = pack::write_wheel(spec, payload, {dir.path, 0});
  return verify::verify_wheel(result.path, verify::Options{});
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
  auto r =
      pack_and_verify(wheel_spec(build_info(false), dir.path / "LICENSE"), "_C.cpython-312-x86_64-linux-gnu.so", dir);
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
  spec.requires_dist = {"torch>=2.12"};  // refuses the build's own torch 2.11.0
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

TEST_CASE("round trip: B4 reads the binding from the extension's symbols", "[posix]") {
  std::string stable = torch_library(wheel::TorchBinding::stable_abi);
  std::string classic = torch_library(wheel::TorchBinding::classic);
  if (stable.empty() || classic.empty()) FAIL("no C++ compiler (c++) to build the sample extensions");
  TempDir dir;
  write_file_atomic(dir.path / "LICENSE", "L\n");
  auto b4 = [](const verify::Report& r) {
    std::vector<std::string> out;
    for (const auto& f : r.findings)
      if (f.rule == "B4") out.push_back(f.message);
    return out;
  };
  // A stable-ABI extension (torch 2.11 build): a floor passes, an exact pin is too strict.
  auto spec = wheel_spec(build_info(true), dir.path / "LICENSE");
  auto fits = pack_and_verify(spec, "_C.abi3.so", dir, stable);
  INFO(listing(fits));
  CHECK(b4(fits).empty());
  spec.requires_dist = {"torch==2.11.0"};
  auto strict = b4(pack_and_verify(spec, "_C.abi3.so", dir, stable));
  REQUIRE(strict.size() == 1);
  CHECK_THAT(strict[0], Catch::Contains("too strict for a stable-ABI extension"));
  // A classic extension (torch 2.9 build): its minor release passes, a floor does not.
  spec = wheel_spec(build_info(false), dir.path / "LICENSE");
  CHECK(b4(pack_and_verify(spec, "_C.cpython-312-x86_64-linux-gnu.so", dir, classic)).empty());
  spec.requires_dist = {"torch>=2.9"};
  auto loose = b4(pack_and_verify(spec, "_C.cpython-312-x86_64-linux-gnu.so", dir, classic));
  REQUIRE(loose.size() == 1);
  CHECK_THAT(loose[0], Catch::Contains("admits torch 2.10.0") && Catch::Contains("C++ ABI of torch 2.9"));
}

TEST_CASE("round trip: a passing wheel gets its per-component report, text and JSON", "[posix]") {
  if (host_library().empty()) FAIL("no C compiler (cc) to build the sample extension");
  TempDir dir;
  write_file_atomic(dir.path / "LICENSE", "Apache License\n");
  auto b = build_info(true);
  b.archs = {"8.0", "9.0"};
  b.ptx_archs = {"9.0"};
  b.kernel_families = {{"quant", {"8.0", "quant_kernel", {}}}, {"sm90", {"", "sm90_kernel", {"9.0a"}}}};
  auto r = pack_and_verify(wheel_spec(b, dir.path / "LICENSE"), "_C.abi3.so", dir);
  std::string ascii = verify::format_human(r, false, kAsciiMarks);
  INFO(ascii);
  // (The made-up archs have no kernels in this host library: B6 fails it, so
  // the report is checked on the lenient reading of a clean copy below.)
  auto clean = r;
  clean.findings = Findings();
  std::string text = verify::format_human(clean, false, kAsciiMarks);
  CHECK_THAT(text, Catch::Contains(": OK (0 errors, 0 strict, 0 warnings)\n"
                                   "  [ok] package: sageattention 2.2.0\n"
                                   "  [ok] PyTorch version tag: 21100 (2.11.0)\n"
                                   "  [ok] CUDA version tag: 130 (13.0)\n"
                                   "  [ok] Python tag: cp39 (CPython 3.9)\n"));
  CHECK_THAT(text, Catch::Contains("  [ok] ABI tag: abi3 (CPython's stable ABI"));
  CHECK_THAT(text, Catch::Contains("  [ok] platform tag: manylinux_2_28_x86_64 (Linux with glibc >= 2.28, x86_64)\n"));
  CHECK_THAT(text, Catch::Contains("  [ok] archs: 8.0 9.0 (PTX for 9.0)\n"));
  CHECK_THAT(text, Catch::Contains("  [ok] kernel families: quant sm90 (quant >= 8.0, sm90 9.0a)\n"));
  std::string emoji = verify::format_human(clean, false, kUtf8Marks);
  CHECK_THAT(emoji, Catch::Contains("  \u2705 PyTorch version tag: 21100 (2.11.0)\n"));
  auto j = verify::to_json(clean, false);
  REQUIRE(j["components"].is_array());
  CHECK(j["components"][1]["key"] == "torch");
  CHECK(j["components"][1]["value"] == "21100");
  CHECK(j["components"][1]["decoded"] == "2.11.0");
  CHECK(j["components"][2]["decoded"] == "13.0");
  // A wheel that fails prints its findings, not the component lines.
  if (r.failed(false)) CHECK(ascii.find("[ok] package") == std::string::npos);
}

TEST_CASE("round trip: a local-version wheel's components decode its label", "[posix]") {
  if (host_library().empty()) FAIL("no C compiler (cc) to build the sample extension");
  TempDir dir;
  write_file_atomic(dir.path / "LICENSE", "Apache License\n");
  auto r =
      pack_and_verify(wheel_spec(build_info(false), dir.path / "LICENSE"), "_C.cpython-312-x86_64-linux-gnu.so", dir);
  std::string text = verify::format_human(r, false, kAsciiMarks);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("  [ok] package: sageattention 2.2.0+cu128torch2.9.0\n"
                                   "  [ok] PyTorch (local version): torch2.9.0 (2.9.0)\n"
                                   "  [ok] CUDA (local version): cu128 (12.8)\n"
                                   "  [ok] Python tag: cp312 (CPython 3.12)\n"));
}
