#include <catch2/catch.hpp>

#include <tuple>

#include <set>

#include "sagebuild/verify/build_info_rules.h"

using namespace sb;
using namespace sb::verify;

namespace {
std::multiset<std::string> rules(const Findings& f) {
  std::multiset<std::string> r;
  for (const auto& x : f) r.insert(x.rule);
  return r;
}
distinfo::BuildInfo info() {
  distinfo::BuildInfo b;
  b.package = "sageattention";
  b.version = "2.2.0";
  b.abi_mode = sb::wheel::AbiMode::abi3;
  b.pythons = {"3.10", "3.9", "3.13"};
  b.wheel = {std::string("280.129"), std::nullopt, "cp39", "abi3", "linux_x86_64"};
  b.torch = {"2.8.0", true, "12.9"};
  b.cuda = {"12.9", "12.9.86"};
  b.platform = "linux_x86_64";
  return b;
}
wheel::WheelFilename fn(const std::string& s) { return *wheel::parse_wheel_filename(s).filename; }
}  // namespace

TEST_CASE("B1: invalid build_info.json is reported with the field") {
  Findings f;
  CHECK_FALSE(load_build_info("{\"schema\": 1}", "p/build_info.json", f));
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "B1");
  CHECK(f[0].message == "build_info.package: missing (required)");
}

TEST_CASE("B2: the build tag encodes the build-info's torch and CUDA") {
  Findings f;
  check_build_info_filename(info(), fn("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl"), "m", f);
  CHECK(f.empty());
  check_build_info_filename(info(), fn("sageattention-2.2.0-290.129-cp39-abi3-linux_x86_64.whl"), "m", f);
  CHECK(rules(f) == std::multiset<std::string>{"B2", "B2"});  // tag differs; it encodes torch 2.9.0
  f.clear();
  check_build_info_filename(info(), fn("sageattention-2.2.0-cp39-abi3-linux_x86_64.whl"), "m", f);
  CHECK(rules(f).count("B2") >= 2);  // neither scheme; build tag missing
  f.clear();
  check_build_info_filename(info(), fn("other-2.2.0-280.129-cp39-abi3-linux_x86_64.whl"), "m", f);
  CHECK(rules(f) == std::multiset<std::string>{"B2"});
}

TEST_CASE("B2: the local version scheme") {
  auto b = info();
  b.wheel.build_tag.reset();
  b.wheel.local_version = "cu129torch2.8.0";
  Findings f;
  check_build_info_filename(b, fn("sageattention-2.2.0+cu129torch2.8.0-cp39-abi3-linux_x86_64.whl"), "m", f);
  CHECK(f.empty());
  check_build_info_filename(b, fn("sageattention-2.2.0+cu128torch2.8.0-cp39-abi3-linux_x86_64.whl"), "m", f);
  CHECK(rules(f) == std::multiset<std::string>{"B2", "B2"});  // label differs; it encodes CUDA 12.8
}

TEST_CASE("B3: file name, WHEEL and build-info tags") {
  Findings f;
  auto name = fn("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl");
  check_build_info_tags(info(), name, {"cp39-abi3-linux_x86_64"}, "m", f);
  CHECK(f.empty());
  check_build_info_tags(info(), name, {"cp39-abi3-linux_x86_64", "cp310-abi3-linux_x86_64"}, "m", f);
  CHECK(rules(f) == std::multiset<std::string>{"B3"});
  f.clear();
  check_build_info_tags(info(), fn("sageattention-2.2.0-280.129-cp310-abi3-linux_x86_64.whl"),
                        {"cp39-abi3-linux_x86_64"}, "m", f);
  CHECK(rules(f) == std::multiset<std::string>{"B3"});
}

TEST_CASE("B4: one torch requirement that fits how the extension links torch") {
  using wheel::TorchBinding;
  auto check = [](std::vector<std::string> requires_dist, std::optional<TorchBinding> binding, std::string torch) {
    Findings f;
    auto b = info();
    b.torch.version = torch;
    check_torch_pin(b, requires_dist, binding, "m", f);
    return f;
  };
  // A classic (torch 2.8) extension needs its minor release.
  CHECK(check({"torch==2.8.*", "numpy"}, TorchBinding::classic, "2.8.0").empty());
  CHECK(check({"torch==2.8.0"}, TorchBinding::classic, "2.8.0").empty());
  // A stable-ABI extension serves every torch from its target on.
  CHECK(check({"torch>=2.10,<3"}, TorchBinding::stable_abi, "2.11.0").empty());
  for (const auto& [requires_dist, binding, torch] :
       std::vector<std::tuple<std::vector<std::string>, std::optional<TorchBinding>, std::string>>{
           {{}, TorchBinding::classic, "2.8.0"},
           {{"torch>=2.8.0"}, TorchBinding::classic, "2.8.0"},  // classic without its pin
           {{"torch==2.9.0"}, TorchBinding::classic, "2.8.0"},
           {{"torch==2.8.*", "Torch<3"}, TorchBinding::classic, "2.8.0"},  // two torch lines
           {{"torch==2.8.*; python_version < '3.12'"}, TorchBinding::classic, "2.8.0"},
           {{"torch==2.11.0"}, TorchBinding::stable_abi, "2.11.0"},  // too strict for the stable ABI
           {{"torch>=2.12"}, std::nullopt, "2.11.0"}}) {             // not even the build's torch
    INFO(requires_dist.size() << " lines, torch " << torch);
    auto f = check(requires_dist, binding, torch);
    CHECK(rules(f) == std::multiset<std::string>{"B4"});
  }
  CHECK_THAT(check({"torch==2.11.0"}, TorchBinding::stable_abi, "2.11.0")[0].message,
             Catch::Contains("too strict for a stable-ABI extension"));
  CHECK_THAT(check({"torch>=2.8.0"}, TorchBinding::classic, "2.8.0")[0].expected,
             Catch::Equals("Requires-Dist: torch==2.8.*"));
}

TEST_CASE("B5: pythons, abi_mode and tags") {
  Findings f;
  check_python_coverage(info(), "m", f);  // floor of 3.9/3.10/3.13 is 3.9 (not "3.10" as text)
  CHECK(f.empty());
  auto b = info();
  b.wheel.python_tag = "cp310";
  check_python_coverage(b, "m", f);
  CHECK(rules(f) == std::multiset<std::string>{"B5"});
  f.clear();
  b = info();
  b.abi_mode = sb::wheel::AbiMode::per_interpreter;
  b.wheel.abi_tag = "cp39";
  check_python_coverage(b, "m", f);
  CHECK(rules(f) == std::multiset<std::string>{"B5"});  // three pythons for a per-interpreter wheel
}
