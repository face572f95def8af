// build.ninja's text, ninja run through a fake runner, and the atomic
// command lines of both hosts' shells.
#include <catch2/catch.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/run/ninja.h"
#include "sagebuild/run/process.h"
#include "sagebuild/run/win_cmdline.h"

using namespace sb::run;

TEST_CASE("ninja: escaping of paths and values") {
  CHECK(ninja_escape_path("a b:c$d") == "a$ b$:c$$d");
  CHECK(ninja_escape_value("x $y") == "x $$y");
  // A line break cannot be written: "$\\n" would be a line continuation.
  CHECK_THROWS_WITH(ninja_escape_value("a\nb"), Catch::Contains("holds a line break"));
  CHECK_THROWS_WITH(ninja_escape_path("/cache/a\nb/k.o"), Catch::Contains("\"/cache/a\\x0ab/k.o\" holds a line break"));
}

TEST_CASE("ninja: one build line per edge, a phony target per row, deterministic") {
  Edge e;
  e.output = "/c/objects/k.o";
  e.inputs = {"/src/a b.cu"};
  e.command = "nvcc -o $tmp && mv -f t o";
  e.description = "nvcc quant";
  std::vector<Target> targets = {{"row-1", {"/w/rows/row-1/_C.abi3.so", "/w/rows/row-1/_fused.so"}}};
  std::string text = ninja_file({e}, targets);
  CHECK(text.find("rule run\n  command = $cmd\n  description = $desc\n") != std::string::npos);
  CHECK(
      text.find("build /c/objects/k.o: run /src/a$ b.cu\n  cmd = nvcc -o $$tmp && mv -f t o\n  desc = nvcc quant\n") !=
      std::string::npos);
  CHECK(text.find("build row-1: phony /w/rows/row-1/_C.abi3.so /w/rows/row-1/_fused.so\n") != std::string::npos);
  CHECK(text.find("\ndefault row-1\n") != std::string::npos);
  CHECK(ninja_file({e}, targets) == text);
}

TEST_CASE("ninja: units that declare their peak memory share a pool that memory bounds") {
  Edge big, small, plain;
  big.output = "/c/objects/api.o";
  big.command = "nvcc api";
  big.peak_memory_gib = 20;  // two archs side by side at 10 GiB each
  small.output = "/c/objects/quant.o";
  small.command = "nvcc quant";
  small.peak_memory_gib = 4;
  plain.output = "/c/objects/b.o";
  plain.command = "g++ b";
  std::vector<Target> targets = {{"row", {"/c/objects/api.o"}}};
  CHECK(memory_pool_depth({big, small, plain}, 15.6) == 1);  // a 16 GB runner: one at a time
  CHECK(memory_pool_depth({big, small, plain}, 64) == 3);
  CHECK(memory_pool_depth({plain}, 64) == 0);      // nothing declared: no pool
  CHECK(memory_pool_depth({big, small}, 0) == 0);  // memory unknown: no pool
  std::string text = ninja_file({big, small, plain}, targets, 47.5);
  CHECK(text.find("pool memory\n  depth = 2\n") != std::string::npos);
  CHECK(text.find("desc = \n  pool = memory\nbuild /c/objects/quant.o") != std::string::npos);
  CHECK(text.find("cmd = g++ b\n  desc = \n  pool") == std::string::npos);
  CHECK(ninja_file({big, plain}, targets).find("pool") == std::string::npos);
}

TEST_CASE("atomic commands: sh's mv -f, cmd.exe's move /y") {
  CHECK(shell_run_then_move({"nvcc", "-o", "/o/.x.tmp.o", "code=[sm_89,compute_89]"}, "/o/.x.tmp.o", "/o/x.o") ==
        "nvcc -o /o/.x.tmp.o 'code=[sm_89,compute_89]' && mv -f /o/.x.tmp.o /o/x.o");
  std::string line =
      cmd_run_then_move({R"(C:\CUDA\bin\nvcc.exe)", "-o", R"(C:\o dir\.x.tmp.obj)", "-DA=1", R"(-IC:\inc\)"},
                        R"(C:\o dir\.x.tmp.obj)", R"(C:\o dir\x.obj)");
  // The program and every argument cmd.exe could split are quoted; a quoted
  // argument's trailing backslash is doubled for the program's C runtime.
  CHECK(line == R"(cmd.exe /d /s /c ""C:\CUDA\bin\nvcc.exe" -o "C:\o dir\.x.tmp.obj" "-DA=1" -IC:\inc\ && )"
                R"(move /y "C:\o dir\.x.tmp.obj" "C:\o dir\x.obj" >nul")");
  CHECK(cmd_run_then_move({"cl.exe", "a b\\"}, "t", "o").find(R"("a b\\")") != std::string::npos);
  CHECK_THROWS_AS(cmd_run_then_move({"cl.exe", "100%"}, "t", "o"), sb::UsageError);
  CHECK_THROWS_AS(cmd_run_then_move({"cl.exe"}, "t\"", "o"), sb::UsageError);
}

namespace {

// ninja's stand-in: `ninja -C dir -j N targets...` exits with `exit_code`;
// `ninja -n target` says "no work to do" for the targets in `done`.
struct FakeNinja : ProcessRunner {
  int exit_code = 0;
  bool spawned = true;
  std::vector<std::string> done;
  std::vector<Command> seen;
  Result run(const Command& c) override {
    seen.push_back(c);
    if (!spawned) return Result{-1, "", "No such file or directory", false, 0};
    if (c.argv.size() == 5 && c.argv[3] == "-n") {
      bool finished = std::find(done.begin(), done.end(), c.argv[4]) != done.end();
      return Result{0, finished ? "ninja: no work to do.\n" : "[1/2] nvcc\n", "", true, 0};
    }
    return Result{exit_code, "", "", true, 0};
  }
};

}  // namespace

TEST_CASE("run_ninja: the targets, -j and -k, and which targets it did not finish") {
  FakeNinja ninja;
  CHECK(run_ninja(ninja, {"/w", 3, true, "ninja", {}}, {"a", "b"}).empty());
  REQUIRE(ninja.seen.size() == 1);
  CHECK(ninja.seen[0].argv == std::vector<std::string>{"ninja", "-C", "/w", "-j", "3", "-k", "0", "a", "b"});
  CHECK(ninja.seen[0].stream_output);
  ninja.exit_code = 1;
  ninja.done = {"a"};
  CHECK(run_ninja(ninja, {"/w", 1, false, "ninja", {}}, {"a", "b"}) == std::vector<std::string>{"b"});
  ninja.spawned = false;
  CHECK_THROWS_WITH(run_ninja(ninja, {"/w", 1, false, "ninja-x", {}}, {"a"}), Catch::Contains("cannot run ninja-x") &&
                                                                                  Catch::Contains("ninja-build") &&
                                                                                  Catch::Contains("pip install ninja"));
}
