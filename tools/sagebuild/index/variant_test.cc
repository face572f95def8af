#include <catch2/catch.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/index/test_wheels.h"
#include "sagebuild/index/variant.h"

using namespace sb::index;
using testing::wheel;

TEST_CASE("variant names: torch minor and the CUDA code") {
  CHECK(variant_name("2.8.0", "12.9") == "torch2.8-cu129");
  CHECK(variant_name("2.10.1", "13.0") == "torch2.10-cu130");
  CHECK(variant_name("2.9", "12.10") == "torch2.9-cu1210");
  CHECK(variant_name("3", "12.8") == "torch3.0-cu128");
  CHECK_THROWS_WITH(variant_name("latest", "12.8"), Catch::Contains("torch version 'latest'"));
  CHECK_THROWS_AS(variant_name("2.8.0", "cu128"), sb::UsageError);
}

TEST_CASE("group_by_variant orders variants numerically and wheels by project, name") {
  auto groups = group_by_variant({
      wheel("sageattention-2.2.0-2100.130-cp39-abi3-win_amd64.whl", "torch2.10-cu130", "2.10.0", "13.0"),
      wheel("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9"),
      wheel("sageattention-2.2.0-280.128-cp39-abi3-linux_x86_64.whl", "torch2.8-cu128", "2.8.0", "12.8"),
      wheel("sageattn3-1.0.0-cp312-cp312-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9", "sageattn3"),
      wheel("sageattention-2.2.0-280.129-cp39-abi3-win_amd64.whl", "torch2.8-cu129", "2.8.0", "12.9"),
  });
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].name == "torch2.8-cu128");
  CHECK(groups[1].name == "torch2.8-cu129");
  CHECK(groups[2].name == "torch2.10-cu130");  // not before 2.8, as text order would put it
  CHECK(groups[1].torch_minor == "2.8");
  CHECK(groups[1].cuda_version == "12.9");
  REQUIRE(groups[1].wheels.size() == 3);
  CHECK(groups[1].wheels[0].filename == "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl");
  CHECK(groups[1].wheels[1].filename == "sageattention-2.2.0-280.129-cp39-abi3-win_amd64.whl");
  CHECK(projects_of(groups[1]) == std::vector<std::string>{"sageattention", "sageattn3"});
  CHECK(group_by_variant({}).empty());
}
