// The up-to-date stamp: what changes it, and when a row is up to date.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/common/os.h"
#include "sagebuild/rows/stamp.h"

using namespace sb::rows;
namespace fs = std::filesystem;

TEST_CASE("the stamp follows the payload, the build-info, the licence and the smoke test") {
  fs::path dir = fs::temp_directory_path() / ("sb-stamp-" + std::to_string(sb::process_id()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  sb::write_file_atomic(dir / "_C.so", "extension");
  std::vector<sb::pack::PayloadFile> payload = {{"pkg/_C.so", dir / "_C.so", std::nullopt},
                                                {"pkg/__init__.py", std::string("x = 1\n"), std::nullopt}};
  sb::distinfo::BuildInfo info;
  info.package = "pkg";
  std::string s0 = row_stamp(payload, info, dir / "LICENSE", true);
  CHECK(row_stamp(payload, info, dir / "LICENSE", true) == s0);
  CHECK(row_stamp(payload, info, dir / "LICENSE", false) != s0);
  sb::write_file_atomic(dir / "_C.so", "another extension");
  CHECK(row_stamp(payload, info, dir / "LICENSE", true) != s0);
  std::string s1 = row_stamp(payload, info, dir / "LICENSE", true);
  info.torch.version = "2.11.0";
  CHECK(row_stamp(payload, info, dir / "LICENSE", true) != s1);
  sb::write_file_atomic(dir / "LICENSE", "MIT");
  CHECK(row_stamp(payload, sb::distinfo::BuildInfo{}, dir / "LICENSE", true) !=
        row_stamp(payload, sb::distinfo::BuildInfo{}, dir / "NO-LICENSE", true));
  {
    // SOURCE_DATE_EPOCH dates every member: another time is another wheel.
    const char* was = std::getenv("SOURCE_DATE_EPOCH");
    std::optional<std::string> saved = was ? std::optional<std::string>(was) : std::nullopt;
    sb::set_environment_variable("SOURCE_DATE_EPOCH", "1700000000");
    std::string dated = row_stamp(payload, info, dir / "LICENSE", true);
    sb::set_environment_variable("SOURCE_DATE_EPOCH", "1600000000");
    CHECK(row_stamp(payload, info, dir / "LICENSE", true) != dated);
    sb::set_environment_variable("SOURCE_DATE_EPOCH", "1700000000");
    CHECK(row_stamp(payload, info, dir / "LICENSE", true) == dated);
    sb::set_environment_variable("SOURCE_DATE_EPOCH", saved);
  }

  SECTION("up to date: the same stamp and the stamped wheel untouched in --out") {
    fs::path wheel = dir / "pkg-1.0-py3-none-any.whl";
    sb::write_file_atomic(wheel, "wheel bytes");
    RowResult res;
    CHECK_FALSE(up_to_date(dir / "stamp.json", wheel, s1, res));  // no stamp yet
    write_stamp(dir / "stamp.json", s1, sb::hex(sb::sha256_file(wheel)));
    CHECK_FALSE(up_to_date(dir / "stamp.json", wheel, s0, res));  // other inputs
    REQUIRE(up_to_date(dir / "stamp.json", wheel, s1, res));
    CHECK(res.ok);
    CHECK(res.stage == "done");
    CHECK(res.wheel == wheel);
    RowResult again;
    sb::write_file_atomic(wheel, "changed after the build");
    CHECK_FALSE(up_to_date(dir / "stamp.json", wheel, s1, again));
    fs::remove(wheel);
    CHECK_FALSE(up_to_date(dir / "stamp.json", wheel, s1, again));
  }
  fs::remove_all(dir);
}
