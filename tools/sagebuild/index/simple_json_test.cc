#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "sagebuild/index/simple_json.h"
#include "sagebuild/index/test_wheels.h"

using namespace sb::index;
using nlohmann::json;
using testing::wheel;

TEST_CASE("PEP 691 project list") {
  json j = json::parse(render_project_list_json({"sageattention", "sageattn3"}));
  CHECK(j["meta"]["api-version"] == "1.1");
  CHECK(j["projects"] == json::array({{{"name", "sageattention"}}, {{"name", "sageattn3"}}}));
}

TEST_CASE("PEP 691 project page: the fields PEP 691 and PEP 700 name") {
  auto a = wheel("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9");
  auto b = wheel("sageattention-2.10.0-280.129-cp39-abi3-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9");
  b.version = "2.10.0";
  b.requires_python.clear();
  b.sha256 = std::string(64, 'b');
  json j = json::parse(render_project_page_json("sageattention", {a, b}, "../../../wheels/"));
  CHECK(j["meta"]["api-version"] == "1.1");
  CHECK(j["name"] == "sageattention");
  CHECK(j["versions"] == json::array({"2.2.0", "2.10.0"}));  // PEP 440 order, not text order
  REQUIRE(j["files"].size() == 2);
  const json& f = j["files"][0];
  CHECK(f["filename"] == a.filename);
  CHECK(f["url"] == "../../../wheels/" + a.filename);
  CHECK(f["hashes"] == json{{"sha256", std::string(64, 'a')}});
  CHECK(f["requires-python"] == ">=3.9");
  CHECK(f["size"] == 1234);
  CHECK_FALSE(j["files"][1].contains("requires-python"));
}
