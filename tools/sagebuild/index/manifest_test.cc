#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "sagebuild/index/manifest.h"
#include "sagebuild/index/test_wheels.h"

using namespace sb::index;
using testing::wheel;

TEST_CASE("manifest lists variants and every wheel with its build info") {
  auto w = wheel("sageattn3-1.0.0+cu128torch2.9.0-cp312-cp312-linux_x86_64.whl", "torch2.9-cu128", "2.9.0", "12.8",
                 "sageattn3");
  w.build_info = nlohmann::json{{"schema", 1}};
  auto groups = group_by_variant({w});
  std::string text = render_manifest(groups);
  auto j = nlohmann::json::parse(text);
  CHECK(j["variants"][0] ==
        nlohmann::json{
            {"name", "torch2.9-cu128"}, {"torch", "2.9"}, {"cuda", "12.8"}, {"index", "torch2.9-cu128/simple/"}});
  const auto& e = j["wheels"][0];
  CHECK(e["url"] == "wheels/sageattn3-1.0.0%2Bcu128torch2.9.0-cp312-cp312-linux_x86_64.whl");
  CHECK(e["project"] == "sageattn3");
  CHECK(e["torch"] == "2.9.0");
  CHECK(e["sha256"] == std::string(64, 'a'));
  CHECK(e["build_info"]["schema"] == 1);
  CHECK(render_manifest(groups) == text);  // reproducible
}
