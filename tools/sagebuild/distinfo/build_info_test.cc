#include <catch2/catch.hpp>

#include "sagebuild/distinfo/build_info.h"

using namespace sb::distinfo;
using nlohmann::json;

namespace {
BuildInfo sample() {
  BuildInfo b;
  b.package = "sageattention";
  b.version = "2.2.0";
  b.abi_mode = sb::wheel::AbiMode::abi3;
  b.pythons = {"3.9", "3.10", "3.11", "3.12", "3.13"};
  b.wheel = {std::string("21100.130"), std::nullopt, "cp39", "abi3", "linux_x86_64"};
  b.torch = {"2.11.0", true, "13.0"};
  b.cuda = {"13.0", "13.0.88"};
  b.archs = {"8.0", "8.6", "8.9", "9.0", "12.0"};
  b.ptx_archs = {"12.0"};
  b.kernel_families = {{"quant", {"8.0", "quant_kernel"}}, {"pv_fp8", {"8.9", "qk_int8_sv_f8"}}};
  b.host_compiler = {"gcc", "12.2.0"};
  b.platform = "linux_x86_64";
  b.source_revision = "0123456789abcdef0123456789abcdef01234567";
  return b;
}

std::string error_of(json j) {
  try {
    j.get<BuildInfo>();
  } catch (const BuildInfoError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("build info: round trip through JSON text") {
  BuildInfo b = sample();
  std::string text = write_build_info(b);
  CHECK(parse_build_info(text) == b);
  CHECK(text == write_build_info(parse_build_info(text)));  // canonical
  json j = json::parse(text);
  CHECK(j["wheel"]["local_version"].is_null());
  CHECK(j["kernel_families"]["pv_fp8"]["min_arch"] == "8.9");
}

TEST_CASE("build info: validation errors name the field") {
  json good = sample();
  json j = good;
  j["torch"]["version"] = 2.11;
  CHECK(error_of(j) == "build_info.torch.version: expected a string, found number");
  j = good;
  j.erase("archs");
  CHECK(error_of(j) == "build_info.archs: missing (required)");
  j = good;
  j["archs"][1] = "sm_86";
  CHECK(error_of(j).find("build_info.archs[1]") == 0);
  j = good;
  j["abi_mode"] = "limited";
  CHECK(error_of(j).find("build_info.abi_mode: expected \"abi3\" or \"cpython\"") == 0);
  j = good;
  j["schema"] = 2;
  CHECK(error_of(j) == "build_info.schema: expected 1, found 2");
  j = good;
  j["kernel_families"]["quant"].erase("min_arch");
  CHECK(error_of(j) == "build_info.kernel_families.quant: expected min_arch (\"8.0\") or archs ([\"9.0a\"])");
  j = good;
  j["wheel"]["local_version"] = "cu130torch2.11.0";
  CHECK(error_of(j).find("build_info.wheel.local_version") == 0);
  CHECK_THROWS_AS(parse_build_info("{not json"), BuildInfoError);
}

TEST_CASE("build info: archs, ptx_archs and min_arch are capabilities, without the 'a' of a target") {
  json good = sample();
  json j = good;
  j["archs"] = {"8.9", "12.0"};
  CHECK(error_of(j).empty());
  for (const char* bad : {"9", "9.a", "9.10", "9.0a", "sm_90"}) {
    j = good;
    j["archs"][0] = bad;
    CHECK(error_of(j) == std::string("build_info.archs[0]: '") + bad + "' is not a compute capability like \"8.9\"");
    j = good;
    j["ptx_archs"][0] = bad;
    CHECK(error_of(j).find("build_info.ptx_archs[0]: '") == 0);
    j = good;
    j["kernel_families"]["quant"]["min_arch"] = bad;
    CHECK(error_of(j) ==
          std::string("build_info.kernel_families.quant.min_arch: '") + bad + "' is not a compute capability");
  }
}

TEST_CASE("build info: a family with exact archs round-trips; older files read unchanged") {
  BuildInfo b = sample();
  b.kernel_families["sm90"] = BuiltFamily{"", "attn_sm90_kernel", {"9.0a"}};
  std::string text = write_build_info(b);
  CHECK(parse_build_info(text) == b);
  CHECK(text == write_build_info(parse_build_info(text)));
  json j = json::parse(text);
  CHECK(j["kernel_families"]["sm90"] == json{{"archs", {"9.0a"}}, {"symbol_marker", "attn_sm90_kernel"}});
  // min_arch families keep exactly the keys they always had.
  CHECK(j["kernel_families"]["quant"] == json{{"min_arch", "8.0"}, {"symbol_marker", "quant_kernel"}});

  // A build-info written before archs existed (verbatim shape of sagebuild's output then).
  const char* older = R"({"abi_mode": "abi3", "archs": ["9.0"], "cuda": {"nvcc": "13.0.88", "version": "13.0"},
    "host_compiler": {"id": "gcc", "version": "12.2.0"},
    "kernel_families": {"pv_fp16": {"min_arch": "8.0", "symbol_marker": "attn_pv_fp16_kernel"},
                        "pv_fp8": {"min_arch": "8.9", "symbol_marker": "attn_pv_fp8_kernel"},
                        "quant": {"min_arch": "8.0", "symbol_marker": "quant_qk_kernel"}},
    "package": "sageattention", "platform": "linux_x86_64", "ptx_archs": ["9.0"],
    "pythons": ["3.10", "3.11", "3.12", "3.13", "3.14"], "schema": 1, "source_revision": "unknown",
    "torch": {"cuda": "13.0", "cxx11_abi": true, "version": "2.11.0"}, "version": "2.2.0",
    "wheel": {"abi_tag": "abi3", "build_tag": "21100.130", "local_version": null, "platform_tag": "linux_x86_64",
              "python_tag": "cp310"}})";
  auto old = parse_build_info(older);
  REQUIRE(old.kernel_families.size() == 3);
  CHECK(old.kernel_families["pv_fp8"] == BuiltFamily{"8.9", "attn_pv_fp8_kernel", {}});
}

TEST_CASE("build info: a family has min_arch or archs, and archs are targets") {
  BuildInfo b = sample();
  b.kernel_families["sm90"] = BuiltFamily{"", "attn_sm90_kernel", {"9.0a"}};
  json good = b;
  json j = good;
  j["kernel_families"]["sm90"]["min_arch"] = "9.0";
  CHECK(error_of(j) == "build_info.kernel_families.sm90: has both min_arch and archs; expected exactly one");
  j = good;
  j["kernel_families"]["sm90"].erase("archs");
  CHECK(error_of(j) == "build_info.kernel_families.sm90: expected min_arch (\"8.0\") or archs ([\"9.0a\"])");
  j = good;
  j["kernel_families"]["sm90"]["archs"] = json::array();
  CHECK(error_of(j).find("build_info.kernel_families.sm90.archs: expected at least one") == 0);
  j = good;
  j["kernel_families"]["sm90"]["archs"] = {"9.0a", "sm_100a"};
  CHECK(error_of(j).find("build_info.kernel_families.sm90.archs[1]: 'sm_100a' is not a target") == 0);
  j = good;
  j["kernel_families"]["sm90"]["archs"] = "9.0a";
  CHECK(error_of(j).find("build_info.kernel_families.sm90.archs: expected an array") == 0);
}

TEST_CASE("build info: a family's archs are targets, with or without the 'a'") {
  BuildInfo b = sample();
  b.kernel_families["sm90"] = BuiltFamily{"", "attn_sm90_kernel", {"9.0a", "12.0"}};
  json good = b;
  CHECK(error_of(good).empty());
  for (const char* bad : {"9.0f", "a", "9.0aa", "sm_90a", "90a"}) {
    json j = good;
    j["kernel_families"]["sm90"]["archs"][1] = bad;
    CHECK(error_of(j) == std::string("build_info.kernel_families.sm90.archs[1]: '") + bad +
                             "' is not a target like \"9.0a\" or \"8.9\"");
  }
}
