#include <catch2/catch.hpp>

#include <CLI/CLI.hpp>

#include "sagebuild/cli/args.h"

using sb::cli::subcommand_first;
using Args = std::vector<std::string>;

namespace {

// The shape of sagebuild's own command line: build options at the top level
// (a bare `sagebuild` builds) and subcommands with options of their own.
struct Shape {
  CLI::App app{"t"};
  std::string profile, out, top_profile;
  std::vector<std::string> rows;
  bool dry = false;
  Shape() {
    app.set_version_flag("--version", "v");
    app.add_option("--profile", top_profile);
    app.add_option("--out", out);
    app.add_option("--row", rows);
    app.add_flag("-n,--dry-run", dry);
    app.add_option("-j,--jobs", out);
    for (const char* name : {"matrix", "build", "doctor", "index"}) {
      CLI::App* sub = app.add_subcommand(name);
      sub->add_option("--profile", profile);
    }
  }
};

}  // namespace

TEST_CASE("an option before the subcommand becomes the subcommand's") {
  Shape s;
  CHECK(subcommand_first(s.app, {"sb", "--profile", "sage2-all", "matrix"}) ==
        Args{"sb", "matrix", "--profile", "sage2-all"});
  CHECK(subcommand_first(s.app, {"sb", "--profile=x", "-n", "doctor", "--row", "r"}) ==
        Args{"sb", "doctor", "--profile=x", "-n", "--row", "r"});
  CHECK(subcommand_first(s.app, {"sb", "-j4", "build"}) == Args{"sb", "build", "-j4"});
  // Already first, or none at all: unchanged.
  CHECK(subcommand_first(s.app, {"sb", "matrix", "--profile", "x"}) == Args{"sb", "matrix", "--profile", "x"});
  CHECK(subcommand_first(s.app, {"sb", "--profile", "x"}) == Args{"sb", "--profile", "x"});
}

TEST_CASE("an option's value that names a subcommand stays the value") {
  Shape s;
  // `sagebuild --out build` builds into ./build: "build" is --out's value.
  CHECK(subcommand_first(s.app, {"sb", "--out", "build"}) == Args{"sb", "--out", "build"});
  CHECK(subcommand_first(s.app, {"sb", "--out", "build", "doctor"}) == Args{"sb", "doctor", "--out", "build"});
  // A repeatable option takes values up to the subcommand, as CLI11 does.
  CHECK(subcommand_first(s.app, {"sb", "--row", "a", "b", "doctor"}) == Args{"sb", "doctor", "--row", "a", "b"});
}

TEST_CASE("the version flag and a bare double dash leave the command line as it is") {
  Shape s;
  CHECK(subcommand_first(s.app, {"sb", "--version", "matrix"}) == Args{"sb", "--version", "matrix"});
  CHECK(subcommand_first(s.app, {"sb", "--", "matrix"}) == Args{"sb", "--", "matrix"});
}

TEST_CASE("the hoisted command line parses into the subcommand's options") {
  Shape s;
  Args a = subcommand_first(s.app, {"sb", "--profile", "sage2-all", "matrix"});
  std::vector<char*> c;
  for (auto& x : a) c.push_back(x.data());
  s.app.parse(static_cast<int>(c.size()), c.data());
  CHECK(s.profile == "sage2-all");
  CHECK(s.top_profile.empty());
}

TEST_CASE("an option the subcommand lacks is an error that names the help to read") {
  Shape s;
  sb::cli::set_failure_message(s.app);
  Args a = subcommand_first(s.app, {"sb", "--dry-run", "matrix"});
  std::vector<char*> c;
  for (auto& x : a) c.push_back(x.data());
  try {
    s.app.parse(static_cast<int>(c.size()), c.data());
    FAIL("matrix accepted --dry-run");
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    CHECK(s.app.exit(e, out, err) != 0);
    CHECK_THAT(err.str(), Catch::StartsWith("sagebuild: error: `sagebuild matrix` does not take --dry-run\n") &&
                              Catch::Contains("`sagebuild matrix --help`"));
  }
}
