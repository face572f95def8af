#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/index/site.h"
#include "sagebuild/index/test_wheels.h"
#include "sagebuild/index/wheel_scan.h"

using namespace sb::index;
namespace fs = std::filesystem;

namespace {

std::vector<VariantGroup> two_variants(const fs::path& dir) {
  testing::write_wheel(dir, "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl", std::nullopt);
  testing::write_wheel(dir, "sageattention-2.2.0-290.130-cp39-abi3-linux_x86_64.whl", std::nullopt);
  return group_by_variant(scan_directory(dir));
}

}  // namespace

TEST_CASE("render_site_pages lays out the landing page, manifest and both API forms") {
  auto groups = group_by_variant(
      {testing::wheel("a-1-280.129-cp39-abi3-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9", "a")});
  std::vector<std::string> paths;
  for (const auto& p : render_site_pages(groups, {"https://x", ""})) paths.push_back(p.path);
  CHECK(paths == std::vector<std::string>{"index.html", "manifest.json", "torch2.8-cu129/simple/index.html",
                                          "torch2.8-cu129/simple/index.json", "torch2.8-cu129/simple/a/index.html",
                                          "torch2.8-cu129/simple/a/index.json"});
}

TEST_CASE("write_site writes every page and copies the wheels") {
  fs::path root = testing::fresh_dir("site");
  auto groups = two_variants(root / "dist");
  fs::path site = root / "site";
  write_site(groups, site, {"https://example.org/sage", ""});
  CHECK(fs::exists(site / "index.html"));
  CHECK(fs::exists(site / "torch2.8-cu129/simple/sageattention/index.html"));
  CHECK(fs::exists(site / "torch2.9-cu130/simple/sageattention/index.json"));
  CHECK(fs::exists(site / "wheels/sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl"));
  // The link in a project page resolves to the copied wheel.
  std::string page = sb::read_file(site / "torch2.8-cu129/simple/sageattention/index.html");
  std::string href = "../../../wheels/sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl";
  CHECK(page.find(href) != std::string::npos);
  CHECK(fs::exists((site / "torch2.8-cu129/simple/sageattention" / href).lexically_normal()));
  // Nothing left beside the site and the wheels' directory.
  CHECK(std::distance(fs::directory_iterator(root), fs::directory_iterator()) == 2);
}

TEST_CASE("write_site replaces a previous site wholesale") {
  fs::path root = testing::fresh_dir("site_replace");
  auto groups = two_variants(root / "dist");
  fs::path site = root / "site";
  write_site(groups, site, {"https://x", ""});
  sb::write_file_atomic(site / "stale.html", "old");
  groups.pop_back();
  write_site(groups, site, {"https://x", ""});
  CHECK_FALSE(fs::exists(site / "stale.html"));
  CHECK_FALSE(fs::exists(site / "torch2.9-cu130"));
  auto manifest = nlohmann::json::parse(sb::read_file(site / "manifest.json"));
  CHECK(manifest["wheels"].size() == 1);
}

TEST_CASE("write_site refuses to replace a directory it did not write") {
  fs::path root = testing::fresh_dir("site_refuse");
  auto groups = two_variants(root / "dist");
  fs::path mine = root / "home";
  fs::create_directories(mine);
  sb::write_file_atomic(mine / "thesis.tex", "precious");
  CHECK_THROWS_WITH(write_site(groups, mine, {"https://x", ""}), Catch::Contains("refusing to replace"));
  CHECK(sb::read_file(mine / "thesis.tex") == "precious");
}

TEST_CASE("a failed write leaves the previous site and no temporary behind") {
  fs::path root = testing::fresh_dir("site_fail");
  auto groups = two_variants(root / "dist");
  fs::path site = root / "site";
  write_site(groups, site, {"https://x", ""});
  groups[0].wheels[0].source = root / "vanished.whl";  // copy_file will fail
  CHECK_THROWS_AS(write_site(groups, site, {"https://x", ""}), sb::IoError);
  CHECK(fs::exists(site / "manifest.json"));
  CHECK(nlohmann::json::parse(sb::read_file(site / "manifest.json"))["wheels"].size() == 2);
  auto entries = std::distance(fs::directory_iterator(root), fs::directory_iterator());
  CHECK(entries == 2);  // dist and site only
}

TEST_CASE("with wheels_url the pages link there and no wheel is copied") {
  fs::path root = testing::fresh_dir("site_external");
  auto groups = two_variants(root / "dist");
  fs::path site = root / "site";
  std::string assets = "https://github.com/o/r/releases/download/v2.2.0/";
  write_site(groups, site, {"https://o.github.io/r", assets});
  CHECK_FALSE(fs::exists(site / "wheels"));
  std::string page = sb::read_file(site / "torch2.8-cu129/simple/sageattention/index.html");
  CHECK(page.find("href=\"" + assets + "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl#sha256=") !=
        std::string::npos);
  auto manifest = nlohmann::json::parse(sb::read_file(site / "manifest.json"));
  CHECK(manifest["wheels"][0]["url"] == assets + "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl");
}

TEST_CASE("write_site replaces only what carries its marker, whatever manifest.json says") {
  fs::path root = testing::fresh_dir("site_marker");
  auto groups = two_variants(root / "dist");
  // A folder that holds a manifest.json among other things is not a site.
  fs::path other = root / "other";
  fs::create_directories(other);
  sb::write_file_atomic(other / "manifest.json", "{}");
  sb::write_file_atomic(other / "notes.txt", "keep me");
  CHECK_THROWS_WITH(write_site(groups, other, {"https://x", ""}),
                    Catch::Contains("without .sagebuild-site") && Catch::Contains("refusing to replace"));
  CHECK(sb::read_file(other / "notes.txt") == "keep me");
  // A marker that is a directory is not the marker either.
  fs::create_directories(other / ".sagebuild-site");
  CHECK_THROWS_WITH(write_site(groups, other, {"https://x", ""}), Catch::Contains("refusing to replace"));
  // What sagebuild wrote carries the marker and is replaced.
  fs::path site = root / "site";
  write_site(groups, site, {"https://x", ""});
  CHECK(fs::is_regular_file(site / kSiteMarker));
  CHECK_NOTHROW(write_site(groups, site, {"https://x", ""}));
  CHECK(fs::is_regular_file(site / kSiteMarker));
}

TEST_CASE("render_site_pages refuses a project or variant that is no plain directory name") {
  auto groups = group_by_variant(
      {testing::wheel("a-1-280.129-cp39-abi3-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9", "../../x")});
  CHECK_THROWS_WITH(render_site_pages(groups, {"https://x", ""}),
                    Catch::StartsWith("project '../../x' cannot name a directory of the site"));
}
