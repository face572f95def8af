#include <catch2/catch.hpp>

#include <filesystem>

#include "sagebuild/run/process.h"

using namespace sb::run;

TEST_CASE("the POSIX runner captures stdout, stderr and the exit code") {
  PosixProcessRunner r;
  auto res = r.run(Command{{"sh", "-c", "echo out; echo err >&2; exit 3"}});
  CHECK(res.spawned);
  CHECK(res.exit_code == 3);
  CHECK(res.out == "out\n");
  CHECK(res.err == "err\n");
  CHECK_FALSE(res.ok());
  auto ok = r.run(Command{{"echo", "hello world"}});
  CHECK(ok.ok());
  CHECK(ok.out == "hello world\n");
}

TEST_CASE("arguments are passed as argv, never through a shell") {
  PosixProcessRunner r;
  auto res = r.run(Command{{"printf", "%s|", "a b", "$HOME", "'q'", ";ls"}});
  CHECK(res.out == "a b|$HOME|'q'|;ls|");
}

TEST_CASE("large output on both pipes does not deadlock") {
  PosixProcessRunner r;
  // 4 MiB on stdout and 4 MiB on stderr, interleaved: far beyond a pipe buffer.
  auto res = r.run(Command{{"sh", "-c",
                            "i=0; while [ $i -lt 64 ]; do head -c 65536 /dev/zero; "
                            "head -c 65536 /dev/zero >&2; i=$((i+1)); done"}});
  CHECK(res.ok());
  CHECK(res.out.size() == 4u << 20);
  CHECK(res.err.size() == 4u << 20);
}

TEST_CASE("env overrides and unsets, and cwd") {
  PosixProcessRunner r;
  ::setenv("SB_TEST_UNSET_ME", "present", 1);
  Command c{{"sh", "-c", "echo \"$SB_X|${SB_TEST_UNSET_ME:-gone}\"; pwd"}};
  c.env["SB_X"] = "value with space";
  c.env["SB_TEST_UNSET_ME"] = std::nullopt;
  auto tmp = std::filesystem::canonical(std::filesystem::temp_directory_path());
  c.cwd = tmp;
  auto res = r.run(c);
  CHECK(res.out == "value with space|gone\n" + tmp.string() + "\n");
}

TEST_CASE("a missing program is reported, not thrown") {
  PosixProcessRunner r;
  auto res = r.run(Command{{"sagebuild-no-such-program-xyz"}});
  CHECK_FALSE(res.spawned);
  CHECK(res.err.find("not found") != std::string::npos);
  CHECK_FALSE(r.run(Command{}).spawned);
}

TEST_CASE("a cwd that does not exist is reported, and nothing runs") {
  PosixProcessRunner r;
  auto marker = std::filesystem::temp_directory_path() / "sb-run-cwd-marker";
  std::filesystem::remove(marker);
  Command c{{"touch", marker.string()}};
  c.cwd = "/nonexistent/sagebuild-no-such-dir";
  auto res = r.run(c);
  CHECK_FALSE(res.spawned);
  CHECK(res.err.find("No such file or directory") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("the child's stdin is /dev/null, so a reader of it ends at once") {
  PosixProcessRunner r;
  auto res = r.run(Command{{"cat"}});
  CHECK(res.spawned);
  CHECK(res.exit_code == 0);
  CHECK(res.out.empty());
}

TEST_CASE("streamed output goes to on_output when set, and is captured all the same") {
  PosixProcessRunner r;
  Command c{{"sh", "-c", "echo out; echo err >&2"}};
  c.stream_output = true;
  std::string seen_out, seen_err;
  c.on_output = [&](std::string_view chunk, bool from_stderr) { (from_stderr ? seen_err : seen_out) += chunk; };
  auto res = r.run(c);
  CHECK(seen_out == "out\n");
  CHECK(seen_err == "err\n");
  CHECK(res.out == "out\n");
  CHECK(res.err == "err\n");
}

TEST_CASE("a signal-killed child reports 128 + signal") {
  PosixProcessRunner r;
  auto res = r.run(Command{{"sh", "-c", "kill -9 $$"}});
  CHECK(res.exit_code == 128 + 9);
}

TEST_CASE("display quotes only what needs quoting") {
  CHECK(shell_quote("plain-arg_1.o") == "plain-arg_1.o");
  CHECK(shell_quote("arch=compute_90a,code=sm_90a") == "arch=compute_90a,code=sm_90a");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("code=[sm_90,compute_90]") == "'code=[sm_90,compute_90]'");
  Command c{{"nvcc", "-o", "out dir/x.o"}};
  c.cwd = "/tmp";
  c.env["CUDA_HOME"] = "/usr/local/cuda";
  CHECK(display(c) == "cd /tmp && CUDA_HOME=/usr/local/cuda nvcc -o 'out dir/x.o'");
}

TEST_CASE("find_program searches the PATH given") {
  auto sh = find_program("sh", "/nonexistent:/bin:/usr/bin");
  REQUIRE(sh);
  CHECK(sh->filename() == "sh");
  CHECK_FALSE(find_program("sh", "/nonexistent"));
  CHECK_FALSE(find_program("", "/bin"));
}
