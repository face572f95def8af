#include <catch2/catch.hpp>

#include "sagebuild/wheel/torch_requirement.h"

using namespace sb::wheel;

namespace {
Requirement req(const char* text) {
  auto r = parse_requirement(text);
  REQUIRE(r);
  return *r;
}
}  // namespace

TEST_CASE("torch requirement: a floor for the stable ABI, the minor release for the classic binding") {
  CHECK(torch_requirement(TorchBinding::stable_abi, "2.11.0", "2.10") == "torch>=2.10,<3");
  CHECK(torch_requirement(TorchBinding::stable_abi, "2.15.0", "2.10") == "torch>=2.10,<3");
  CHECK(torch_requirement(TorchBinding::classic, "2.8.0", "2.10") == "torch==2.8.*");
  CHECK(torch_requirement(TorchBinding::classic, "2.9.1") == "torch==2.9.*");
  // Each requirement passes its own check.
  CHECK(torch_requirement_problem(req("torch>=2.10,<3"), "2.11.0", TorchBinding::stable_abi).empty());
  CHECK(torch_requirement_problem(req("torch==2.8.*"), "2.8.0", TorchBinding::classic).empty());
}

TEST_CASE("torch requirement: what pip would do with the user's torch decides") {
  auto stable = TorchBinding::stable_abi;
  auto classic = TorchBinding::classic;
  // The installed torch a requirement must keep, as pip compares it: local
  // labels (+cu130) do not matter to a specifier without one.
  auto user = [](const char* requirement, const char* installed) {
    return req(requirement).specifier.contains(*parse_version(installed), true);
  };
  CHECK(user("torch>=2.10,<3", "2.12.1+cu130"));
  CHECK(user("torch==2.8.*", "2.8.1+cu129"));
  CHECK_FALSE(user("torch==2.8.*", "2.9.0+cu128"));

  // A stable-ABI extension pinned exactly: too strict.
  CHECK_THAT(torch_requirement_problem(req("torch==2.11.0"), "2.11.0", stable),
             Catch::Contains("too strict for a stable-ABI extension") && Catch::Contains("refuses torch 2.12.0"));
  CHECK_FALSE(torch_requirement_problem(req("torch==2.11.*"), "2.11.0", stable).empty());
  // A classic extension without its pin: it would load into another ABI.
  CHECK_THAT(torch_requirement_problem(req("torch>=2.8"), "2.8.0", classic),
             Catch::Contains("admits torch 2.9.0") && Catch::Contains("C++ ABI of torch 2.8"));
  CHECK_THAT(torch_requirement_problem(req("torch<2.9"), "2.8.0", classic), Catch::Contains("admits torch 2.7.0"));
  CHECK(torch_requirement_problem(req("torch==2.8.0"), "2.8.0", classic).empty());  // stricter, still the ABI
  CHECK(torch_requirement_problem(req("torch>=2.8,<2.9"), "2.8.0", classic).empty());
  // Whatever the binding: the build's own torch must be admitted.
  for (auto binding : {std::optional<TorchBinding>(), std::optional(stable), std::optional(classic)})
    CHECK_THAT(torch_requirement_problem(req("torch>=2.12"), "2.11.0", binding),
               Catch::Contains("does not admit torch 2.11.0"));
  CHECK(torch_requirement_problem(req("torch>=2.8"), "2.11.0", std::nullopt).empty());
  CHECK_FALSE(torch_requirement_problem(req("torch @ https://example.org/torch.whl"), "2.11.0", std::nullopt).empty());
}
