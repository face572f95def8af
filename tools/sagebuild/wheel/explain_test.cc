#include <catch2/catch.hpp>

#include "sagebuild/wheel/explain.h"

using namespace sb::wheel;

namespace {

const Part* part(const Explained& e, const std::string& key) {
  for (const auto& p : e.parts)
    if (p.key == key) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("a build-tag wheel name decodes part by part") {
  Explained e = explain_name("dist/sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl");
  REQUIRE(e.ok());
  CHECK(e.kind == "wheel file name");
  REQUIRE(part(e, "package"));
  CHECK(part(e, "package")->value == "sageattention 2.2.0");
  REQUIRE(part(e, "torch"));
  CHECK(part(e, "torch")->value == "280");
  CHECK(part(e, "torch")->decoded == "2.8.0");
  CHECK(part(e, "cuda")->value == "129");
  CHECK(part(e, "cuda")->decoded == "12.9");
  CHECK(part(e, "python")->decoded == "CPython 3.12");
  CHECK_THAT(part(e, "abi")->decoded, Catch::StartsWith("CPython 3.12's own ABI"));
  CHECK_THAT(part(e, "platform")->decoded, Catch::StartsWith("Linux, x86_64"));
}

TEST_CASE("new torch codes and abi3 wheels") {
  Explained e = explain_name("sageattention-2.2.0-21100.130-cp39-abi3-manylinux_2_28_x86_64.whl");
  REQUIRE(e.ok());
  CHECK(part(e, "torch")->decoded == "2.11.0");
  CHECK(part(e, "cuda")->decoded == "13.0");
  CHECK(part(e, "python")->decoded == "CPython 3.9");
  CHECK_THAT(part(e, "abi")->decoded, Catch::StartsWith("CPython's stable ABI"));
  CHECK(part(e, "platform")->decoded == "Linux with glibc >= 2.28, x86_64");
}

TEST_CASE("bare build tags and local versions") {
  CHECK(part(explain_name("280.129"), "torch")->decoded == "2.8.0");
  CHECK(part(explain_name("21100.130"), "cuda")->decoded == "13.0");
  Explained local = explain_name("+cu128torch2.9.0");
  REQUIRE(local.ok());
  CHECK(local.kind == "local version");
  CHECK(part(local, "torch")->decoded == "2.9.0");
  CHECK(part(local, "cuda")->decoded == "12.8");
  Explained version = explain_name("1.0.0+cu128torch2.9.0");
  REQUIRE(version.ok());
  CHECK(part(version, "version")->value == "1.0.0");
  CHECK(part(version, "torch")->decoded == "2.9.0");
  Explained wheel = explain_name("sageattn3-1.0.0+cu128torch2.9.0-cp312-cp312-win_amd64.whl");
  REQUIRE(wheel.ok());
  CHECK(part(wheel, "cuda")->value == "cu128");
  CHECK(part(wheel, "platform")->decoded == "Windows, amd64");
}

TEST_CASE("a name that does not decode says which part and what was expected") {
  Explained ambiguous = explain_name("2110.129");  // 2.1.10 or 21.1.0?
  REQUIRE_FALSE(ambiguous.ok());
  CHECK_THAT(ambiguous.problems.front(),
             Catch::StartsWith("build tag '2110.129': ") && Catch::Contains("expected <torch code>.<CUDA code>"));
  CHECK_FALSE(part(ambiguous, "build_tag")->ok);

  Explained foreign = explain_name("pkg-1.0-1-py3-none-any.whl");  // a legal build tag, not ours
  REQUIRE_FALSE(foreign.ok());
  CHECK_THAT(foreign.problems.front(), Catch::StartsWith("build tag '1': "));

  Explained parts = explain_name("sageattention-2.2.0-cp312-linux_x86_64.whl");
  REQUIRE_FALSE(parts.ok());
  CHECK_THAT(parts.problems.front(), Catch::StartsWith("F2: "));

  Explained local = explain_name("+cu128torch");
  REQUIRE_FALSE(local.ok());
  CHECK_THAT(local.problems.front(), Catch::StartsWith("local version '+cu128torch': ") &&
                                         Catch::Contains("expected +cu<CUDA code>torch<torch version>"));

  Explained none = explain_name("hello");
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.problems.front(), Catch::Contains("none of the names sagebuild decodes"));
}

TEST_CASE("a wheel name without torch or CUDA says so, without failing") {
  Explained e = explain_name("numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  CHECK(e.ok());
  CHECK(part(e, "torch") == nullptr);
  REQUIRE(e.notes.size() == 1);
  CHECK_THAT(e.notes.front(), Catch::Contains("records no torch or CUDA"));
  CHECK_THAT(part(e, "platform")->decoded, Catch::Contains("glibc >= 2.17") && Catch::Contains("; "));
}
