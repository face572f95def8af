#include <catch2/catch.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_env.h"

using namespace sb::run;
using Entries = std::vector<std::string>;

TEST_CASE("environment: names are case-insensitive and keep their first spelling") {
  Environment env;
  env.set("Path", "C:\\a");
  env.set("PATH", "C:\\b");
  REQUIRE(env.size() == 1);
  CHECK(env.vars()[0].name == "Path");
  CHECK(*env.get("path") == "C:\\b");
  CHECK(env.remove("pAtH"));
  CHECK_FALSE(env.get("Path"));
  CHECK_FALSE(env.remove("Path"));
}

TEST_CASE("environment: GetEnvironmentStrings entries, per-drive directories included") {
  Environment env = environment_from_entries(
      {"=C:=C:\\work", "=ExitCode=00000000", "Path=C:\\Windows;C:\\bin", "EMPTY=", "no-equals", "", "X=a=b"});
  CHECK(*env.get("=C:") == "C:\\work");
  CHECK(*env.get("=ExitCode") == "00000000");
  CHECK(*env.get("PATH") == "C:\\Windows;C:\\bin");
  CHECK(*env.get("EMPTY") == "");
  CHECK(*env.get("X") == "a=b");
  CHECK(env.size() == 5);
}

TEST_CASE("environment: overrides set, replace (any case) and remove") {
  Environment base = environment_from_entries({"Path=C:\\Windows", "TEMP=C:\\t", "KEEP=1"});
  Environment out = apply_overrides(base, {{"PATH", "C:\\vs;C:\\Windows"}, {"temp", std::nullopt}, {"NEW", "v w"}});
  CHECK(*out.get("Path") == "C:\\vs;C:\\Windows");
  CHECK(out.vars()[0].name == "Path");  // the base's spelling stays
  CHECK_FALSE(out.get("TEMP"));
  CHECK(*out.get("NEW") == "v w");
  CHECK(*out.get("KEEP") == "1");
  CHECK(*base.get("TEMP") == "C:\\t");  // the base is not changed
  CHECK_THROWS_AS(apply_overrides(base, {{"A=B", "x"}}), sb::UsageError);
  CHECK_THROWS_WITH(apply_overrides(base, {{"", "x"}}), Catch::Contains("non-empty name"));
}

TEST_CASE("environment block: sorted by upper-cased name, ordinal; values untouched") {
  Environment env = environment_from_entries(
      {"windir=C:\\Windows", "Path=C:\\x", "=C:=C:\\work", "_UNDER=1", "PATHEXT=.COM;.EXE", "a=lower", "B=upper"});
  // '=' (0x3D) < 'A'; '_' (0x5F) > 'Z' (0x5A) once both sides are upper-cased.
  CHECK(environment_block_entries(env) == Entries{"=C:=C:\\work", "a=lower", "B=upper", "Path=C:\\x",
                                                  "PATHEXT=.COM;.EXE", "windir=C:\\Windows", "_UNDER=1"});
  CHECK(environment_block_entries(Environment{}).empty());
}
