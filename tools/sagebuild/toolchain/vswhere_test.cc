#include <catch2/catch.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/toolchain/vswhere.h"

using namespace sb::toolchain;

namespace {

// The shape `vswhere -products * -format json -utf8` prints (trimmed to the
// fields we read plus a few we ignore): a Build Tools 2019, an Enterprise
// 2022, and a 2022 Preview.
const char* kThreeInstalls = R"json([
  {
    "instanceId": "1a2b3c4d",
    "installationName": "VisualStudio/16.11.40+34931.43",
    "installationPath": "C:\\Program Files (x86)\\Microsoft Visual Studio\\2019\\BuildTools",
    "installationVersion": "16.11.34931.43",
    "isComplete": true,
    "isLaunchable": true,
    "isPrerelease": false,
    "displayName": "Visual Studio Build Tools 2019",
    "catalog": { "productDisplayVersion": "16.11.40" }
  },
  {
    "instanceId": "5e6f7a8b",
    "installationPath": "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise",
    "installationVersion": "17.14.36301.6",
    "isComplete": true,
    "isPrerelease": false,
    "displayName": "Visual Studio Enterprise 2022"
  },
  {
    "instanceId": "9c0d1e2f",
    "installationPath": "C:\\Program Files\\Microsoft Visual Studio\\2022\\Preview",
    "installationVersion": "17.15.36400.1",
    "isComplete": true,
    "isPrerelease": true,
    "displayName": "Visual Studio Enterprise 2022 Preview"
  }
])json";

}  // namespace

TEST_CASE("vswhere_argv asks for the newest install with the x64 C++ tools as JSON") {
  auto argv = vswhere_argv("C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\vswhere.exe");
  CHECK(argv == std::vector<std::string>{
                    "C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\vswhere.exe", "-latest", "-products",
                    "*", "-requires", "Microsoft.VisualStudio.Component.VC.Tools.x86.x64", "-format", "json", "-utf8"});
  CHECK(default_vswhere_path("C:\\Program Files (x86)") ==
        "C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\vswhere.exe");
}

TEST_CASE("parse_vswhere_json reads path, version and name") {
  auto installs = parse_vswhere_json(kThreeInstalls);
  REQUIRE(installs.size() == 3);
  CHECK(installs[0].installation_path == "C:\\Program Files (x86)\\Microsoft Visual Studio\\2019\\BuildTools");
  CHECK(installs[0].installation_version == "16.11.34931.43");
  CHECK(installs[0].display_name == "Visual Studio Build Tools 2019");
  CHECK_FALSE(installs[0].is_prerelease);
  CHECK(installs[2].is_prerelease);
}

TEST_CASE("choose_install picks the newest complete release") {
  auto installs = parse_vswhere_json(kThreeInstalls);
  auto best = choose_install(installs);
  REQUIRE(best);
  CHECK(best->display_name == "Visual Studio Enterprise 2022");
  auto with_preview = choose_install(installs, /*allow_prerelease=*/true);
  REQUIRE(with_preview);
  CHECK(with_preview->installation_version == "17.15.36400.1");

  installs[1].is_complete = false;  // an update left half-done
  CHECK(choose_install(installs)->installation_version == "16.11.34931.43");
  CHECK_FALSE(choose_install({}));
}

TEST_CASE("dotted versions compare numerically, not as text") {
  CHECK(compare_dotted_versions("17.9.34622.214", "17.14.36301.6") < 0);
  CHECK(compare_dotted_versions("17.14", "17.14.0") == 0);
  CHECK(compare_dotted_versions("17.14.1", "17.14") > 0);
  CHECK(compare_dotted_versions("", "1") < 0);
}

TEST_CASE("parse_vswhere_json: empty result, odd entries, bad input") {
  CHECK(parse_vswhere_json("[]").empty());
  // No installationPath: nothing to use.  0/1 booleans from old vswhere.
  auto odd = parse_vswhere_json(R"([{"installationVersion":"17.0"},{"installationPath":"C:\\VS","isPrerelease":1}])");
  REQUIRE(odd.size() == 1);
  CHECK(odd[0].is_prerelease);
  CHECK_THROWS_WITH(parse_vswhere_json("Error 0x57: bad argument", "vswhere.exe"),
                    Catch::Contains("vswhere.exe: error: vswhere did not print valid JSON"));
  CHECK_THROWS_WITH(parse_vswhere_json(R"({"installationPath":"C:\\VS"})"),
                    Catch::Contains("expected a JSON array of installs, found a JSON object"));
  CHECK_THROWS_AS(parse_vswhere_json("[1]"), sb::ConfigError);
}
