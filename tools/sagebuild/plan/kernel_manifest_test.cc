// kernels/families.json: parsed, and refused with the key at fault.
#include <catch2/catch.hpp>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/plan/kernel_manifest.h"

using namespace sb::plan;

TEST_CASE("kernel manifests are validated with the key at fault") {
  const char* good = R"({"families": {"quant": {"sources": ["kernels/src/quant.cu"], "min_arch": "8.0"},
                                       "pv_fp8": {"sources": ["kernels/src/pv_fp8.cu"], "min_arch": "8.9"}},
                         "binding": {"sources": ["kernels/binding/ops.cc"]},
                         "include_dirs": ["kernels/include"], "nvcc_flags": ["--use_fast_math"]})";
  auto m = parse_kernel_manifest(good, "families.json");
  REQUIRE(m.families.size() == 2);
  CHECK(m.families[0].name == "pv_fp8");
  REQUIRE(m.families[0].min_arch);
  CHECK(m.families[0].min_arch->sm == 89);
  CHECK(m.families[0].archs.empty());
  CHECK(m.nvcc_flags == std::vector<std::string>{"--use_fast_math"});
  CHECK_THROWS_WITH(
      parse_kernel_manifest(
          R"({"families": {"q": {"sources": ["a.cu"], "min_arch": "eight"}}, "binding": {"sources": ["b.cc"]}})",
          "f.json"),
      Catch::Contains("families.q.min_arch"));
  CHECK_THROWS_WITH(parse_kernel_manifest(R"({"families": {"q": {"sources": ["a.cu"], "min_arch": "8.0"}}})", "f.json"),
                    Catch::Contains("binding"));
  CHECK_THROWS_WITH(parse_kernel_manifest("{", "f.json"), Catch::Contains("f.json"));
  CHECK_FALSE(m.cudart_static);
  CHECK(parse_kernel_manifest(
            R"({"families": {"q": {"sources": ["a.cu"], "min_arch": "8.0"}}, "binding": {"sources": ["b.cc"]},
                                  "link": {"cudart": "static"}})",
            "f.json")
            .cudart_static);
  CHECK_THROWS_WITH(
      parse_kernel_manifest(
          R"({"families": {"q": {"sources": ["a.cu"], "min_arch": "8.0"}}, "binding": {"sources": ["b.cc"]},
                                              "link": {"cudart": "dynamic"}})",
          "f.json"),
      Catch::Contains("link.cudart"));
  CHECK_THROWS_AS(sb::parse_arch_arg("9", "--archs"), sb::UsageError);
  CHECK(sb::parse_arch_arg("9.0a", "--archs").arch_specific);
  CHECK(sb::parse_arch_arg("12.0", "--archs").sm == 120);
}

TEST_CASE("kernel families give min_arch or exact archs, exactly one") {
  auto manifest_with = [](const std::string& family) {
    return R"({"families": {"quant": {"sources": ["kernels/src/quant.cu"], "min_arch": "8.0"}, "sm90": )" + family +
           R"(}, "binding": {"sources": ["kernels/binding/ops.cc"]}})";
  };
  // The contract's sm90 family, verbatim.
  auto m = parse_kernel_manifest(manifest_with(R"json({
      "sources": ["kernels/src/attn_sm90.cu"],
      "archs": ["9.0a"],
      "description": "attention for Hopper: INT8 Q.K^T and FP8/FP16 P.V with wgmma (sm_90a)",
      "symbol_marker": "attn_sm90_kernel"})json"),
                                 "kernels/families.json");
  REQUIRE(m.families.size() == 2);
  const auto& quant = m.families[0];
  const auto& sm90 = m.families[1];
  CHECK(quant.min_arch);
  CHECK(quant.archs.empty());
  CHECK(sm90.name == "sm90");
  CHECK_FALSE(sm90.min_arch);
  REQUIRE(sm90.archs.size() == 1);
  CHECK(sm90.archs[0].name() == "9.0a");
  CHECK(sm90.archs[0].sm == 90);
  CHECK(sm90.archs[0].arch_specific);
  CHECK(sm90.symbol_marker == "attn_sm90_kernel");
  auto two =
      parse_kernel_manifest(manifest_with(R"({"sources": ["a.cu"], "archs": ["9.0a", "10.0a", "12.0"]})"), "f.json");
  CHECK(two.families[1].archs.size() == 3);
  CHECK(two.families[1].archs[1].sm == 100);

  auto error_of = [&](const std::string& family) {
    try {
      parse_kernel_manifest(manifest_with(family), "kernels/families.json");
    } catch (const sb::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto both = error_of(R"({"sources": ["a.cu"], "min_arch": "9.0", "archs": ["9.0a"]})");
  CHECK(both.find("kernels/families.json") == 0);
  CHECK(both.find("families.sm90: gives both min_arch and archs; expected exactly one") != std::string::npos);
  auto neither = error_of(R"({"sources": ["a.cu"], "symbol_marker": "x"})");
  CHECK(neither.find("kernels/families.json") == 0);
  CHECK(neither.find("families.sm90: missing min_arch or archs") != std::string::npos);
  CHECK(error_of(R"({"sources": ["a.cu"], "archs": []})").find("families.sm90.archs: expected a non-empty list") !=
        std::string::npos);
  CHECK(error_of(R"({"sources": ["a.cu"], "archs": "9.0a"})").find("families.sm90.archs: expected a non-empty list") !=
        std::string::npos);
  CHECK(error_of(R"({"sources": ["a.cu"], "archs": ["9.0a", "hopper"]})").find("families.sm90.archs[1]") !=
        std::string::npos);
  CHECK(error_of(R"({"sources": ["a.cu"], "archs": [90]})").find("families.sm90.archs[0]: expected a string") !=
        std::string::npos);
  CHECK(error_of(R"({"sources": ["a.cu"], "archs": ["9.0a", "9.0a"]})").find("lists \"9.0a\" twice") !=
        std::string::npos);
  CHECK(error_of(R"({"sources": ["a.cu"], "min_arch": 8})").find("families.sm90.min_arch: expected a string") !=
        std::string::npos);
}

TEST_CASE("kernel manifest: binding.stable_abi names the source, the first torch and the target version") {
  const std::string head =
      R"({"families": {"q": {"sources": ["a.cu"], "min_arch": "8.0"}}, "binding": {"sources": ["ops.cc"], )";
  auto m = parse_kernel_manifest(
      head + R"("stable_abi": {"sources": ["ops_stable.cc"], "min_torch": "2.11", "target_version": "2.10"}}})",
      "f.json");
  REQUIRE(m.stable_abi);
  CHECK(m.stable_abi->source == "ops_stable.cc");
  CHECK(m.stable_abi->min_torch == sb::matrix::TorchVersion{2, 11});
  CHECK(m.stable_abi->target_version_macro() == "0x020A000000000000");
  using sb::matrix::TorchVersion;
  CHECK(m.stable_binding_for({2, 10, 0, true}) == nullptr);
  CHECK(m.stable_binding_for({2, 11, 0, true}) == &*m.stable_abi);
  CHECK(m.stable_binding_for({2, 12, 1, true}) == &*m.stable_abi);
  CHECK(m.stable_binding_for({3, 0, 0, true}) == &*m.stable_abi);
  CHECK_FALSE(parse_kernel_manifest(head + "\"defines\": []}}", "f.json").stable_abi);
  auto bad = [&](const std::string& stable) {
    return parse_kernel_manifest(head + "\"stable_abi\": " + stable + "}}", "f.json");
  };
  CHECK_THROWS_WITH(bad("[]"), Catch::Contains("binding.stable_abi") && Catch::Contains("expected an object"));
  CHECK_THROWS_WITH(bad(R"({"sources": ["a.cc", "b.cc"], "min_torch": "2.10", "target_version": "2.10"})"),
                    Catch::Contains("binding.stable_abi.sources") && Catch::Contains("exactly one"));
  CHECK_THROWS_WITH(bad(R"({"sources": ["a.cc"], "target_version": "2.10"})"),
                    Catch::Contains("binding.stable_abi.min_torch"));
  CHECK_THROWS_WITH(bad(R"({"sources": ["a.cc"], "min_torch": "2.10", "target_version": 2.10})"),
                    Catch::Contains("binding.stable_abi.target_version"));
  CHECK_THROWS_WITH(bad(R"({"sources": ["a.cc"], "min_torch": "2.10+cu130", "target_version": "2.10"})"),
                    Catch::Contains("is not a torch release"));
  CHECK_THROWS_WITH(bad(R"({"sources": ["a.cc"], "min_torch": "2.10", "target_version": "2.11"})"),
                    Catch::Contains("older than target_version"));
  CHECK_THROWS_WITH(bad(R"({"sources": ["a.cc"], "min_torch": "2.10", "target_version": "2.9"})"),
                    Catch::Contains("older than 2.10"));
  CHECK_THROWS_WITH(bad(R"({"sources": ["a.cc"], "min_torch": "2.10", "target_version": "2.10", "min_python": "3.9"})"),
                    Catch::Contains("binding.stable_abi.min_python") && Catch::Contains("unknown key"));
}
