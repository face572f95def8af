// WindowsProcessRunner as a Windows program: built with mingw-w64 and run
// under wine on Linux (build/CMakeLists.txt), or natively on Windows.  The
// child, sb_win_child.exe beside this executable, reports what it received
// (process_win32_child.cc).  What wine cannot tell: that real Windows agrees
// in every detail; the argument and environment rules themselves are the
// documented ones, tested on Linux in platform/.
#include <catch2/catch.hpp>

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sagebuild/run/process.h"
#include "sagebuild/run/win_cmdline.h"
#include "sagebuild/run/win_path.h"

using namespace sb::run;
using Lines = std::vector<std::string>;

namespace {

std::string narrow(const std::wstring& w) {
  if (w.empty()) return {};
  int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
  std::string s(static_cast<std::size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr, nullptr);
  return s;
}

std::string child_path() {
  wchar_t self[4096];
  DWORD n = GetModuleFileNameW(nullptr, self, 4096);
  return sb::run::win_join(sb::run::win_parent(narrow(std::wstring(self, n))), "sb_win_child.exe");
}

std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string h;
  for (unsigned char c : s) {
    h += digits[c >> 4];
    h += digits[c & 15];
  }
  return h;
}

Lines lines(const std::string& text) {
  Lines out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

Lines hex_lines(const std::vector<std::string>& values) {
  Lines out;
  for (const auto& v : values) out.push_back(hex(v));
  return out;
}

Command child(std::vector<std::string> args) {
  Command c;
  c.argv = {child_path()};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  return c;
}

// Arguments that need every rule of win_cmdline's quoting.
const std::vector<std::string> kHardArgs = {
    "plain",
    "two words",
    "",
    "tab\there",
    "\"",
    "say \"hi\"",
    "\\",
    "\\\\",
    "C:\\Program Files\\",
    "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8\\bin\\nvcc.exe",
    "trailing\\",
    "trailing two\\\\",
    "a\\\"b",
    "a\\\\\"b c",
    "\\\\server\\share\\",
    "-DNAME=\"quoted value\"",
    "/Fo\"C:\\out dir\\x.obj\"",
    "%PATH% !x! & | < > ^ ( )",
    "new\nline",
    "caf\xc3\xa9 \xe6\x95\xb0\xe6\x8d\xae",
    "",
};

}  // namespace

TEST_CASE("argument vectors reach the child exactly (C runtime and CommandLineToArgvW)") {
  WindowsProcessRunner runner;
  std::vector<std::string> args = {"argv"};
  args.insert(args.end(), kHardArgs.begin(), kHardArgs.end());
  Result r = runner.run(child(args));
  INFO(r.err);
  REQUIRE(r.ok());
  CHECK(lines(r.out) == hex_lines(kHardArgs));

  args[0] = "argv-shell";
  Result s = runner.run(child(args));
  REQUIRE(s.ok());
  CHECK(lines(s.out) == hex_lines(kHardArgs));

  // One argument at a time too: an empty or trailing-backslash argument last
  // on the line is where quoting mistakes show.
  for (const auto& a : kHardArgs) {
    Result one = runner.run(child({"argv", a}));
    REQUIRE(one.ok());
    CHECK(lines(one.out) == Lines{hex(a)});
  }
}

TEST_CASE("a program path with spaces is quoted as the program") {
  // Copy the child into a directory with a space and run it from there.
  wchar_t tmp[MAX_PATH];
  GetTempPathW(MAX_PATH, tmp);
  std::string dir = sb::run::win_join(narrow(tmp), "sb runner test " + std::to_string(GetCurrentProcessId()));
  std::string exe = sb::run::win_join(dir, "child copy.exe");
  auto wide = [](const std::string& s) {
    int n = MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
    std::wstring w(static_cast<std::size_t>(n), L'\0');
    MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
  };
  CreateDirectoryW(wide(dir).c_str(), nullptr);
  REQUIRE(CopyFileW(wide(child_path()).c_str(), wide(exe).c_str(), FALSE));
  WindowsProcessRunner runner;
  Command c;
  c.argv = {exe, "argv", "x y", "z\\"};
  Result r = runner.run(c);
  INFO(r.err);
  CHECK(r.ok());
  CHECK(lines(r.out) == hex_lines({"x y", "z\\"}));
  DeleteFileW(wide(exe).c_str());
  RemoveDirectoryW(wide(dir).c_str());
}

TEST_CASE("the environment block: the base environment, with overrides, and nothing else") {
  SetEnvironmentVariableW(L"SB_PARENT_ONLY", L"from the parent");
  WindowsProcessRunner inherit;
  Command c = child({"env", "SB_PARENT_ONLY", "SB_SET", "SB_GONE"});
  c.env["SB_SET"] = "v w=x caf\xc3\xa9";
  c.env["SB_PARENT_ONLY"] = std::nullopt;
  Result r = inherit.run(c);
  INFO(r.err);
  REQUIRE(r.ok());
  CHECK(lines(r.out) == Lines{"SB_PARENT_ONLY unset", "SB_SET=" + hex("v w=x caf\xc3\xa9"), "SB_GONE unset"});

  // With no overrides, this process's environment passes through.
  Result same = inherit.run(child({"env", "SB_PARENT_ONLY"}));
  CHECK(lines(same.out) == Lines{"SB_PARENT_ONLY=" + hex("from the parent")});

  // An explicit base (vcvars' captured environment in a build) replaces ours.
  sb::run::Environment base;
  base.set("Path", "C:\\nowhere;C:\\vs\\bin");
  base.set("SB_BASE", "from the base");
  base.set("SystemRoot", "C:\\windows");
  WindowsProcessRunner with_base(base);
  Command b = child({"env", "SB_PARENT_ONLY", "SB_BASE", "PATH", "SB_OVER"});
  b.env["sb_base"] = "overridden, any case";
  b.env["SB_OVER"] = "";
  Result rb = with_base.run(b);
  INFO(rb.err);
  REQUIRE(rb.ok());
  CHECK(lines(rb.out) == Lines{"SB_PARENT_ONLY unset", "SB_BASE=" + hex("overridden, any case"),
                               "PATH=" + hex("C:\\nowhere;C:\\vs\\bin"), "SB_OVER="});

  // The whole block the child sees holds the base's variables (wine or
  // Windows may add their own, such as per-drive directories).
  Result all = with_base.run(child({"env-block"}));
  REQUIRE(all.ok());
  Lines entries = lines(all.out);
  for (const char* want : {"Path=C:\\nowhere;C:\\vs\\bin", "SB_BASE=from the base", "SystemRoot=C:\\windows"})
    CHECK(std::find(entries.begin(), entries.end(), hex(want)) != entries.end());
  CHECK(std::find(entries.begin(), entries.end(), hex("SB_PARENT_ONLY=from the parent")) == entries.end());
  SetEnvironmentVariableW(L"SB_PARENT_ONLY", nullptr);
}

TEST_CASE("a bare program name is looked up on the child's PATH, not ours") {
  sb::run::Environment base;
  base.set("PATH", "C:\\does-not-exist;" + sb::run::win_parent(child_path()));
  base.set("SystemRoot", "C:\\windows");
  WindowsProcessRunner runner(base);
  Result r = runner.run(Command{{"sb_win_child", "argv", "found"}});
  INFO(r.err);
  CHECK(r.ok());
  CHECK(lines(r.out) == Lines{hex("found")});

  WindowsProcessRunner ours;  // this process's PATH does not hold the child's directory
  Result missing = ours.run(Command{{"sb_win_child", "argv"}});
  CHECK_FALSE(missing.spawned);
  CHECK(missing.err.find("program not found: sb_win_child") != std::string::npos);
  CHECK_FALSE(ours.run(Command{}).spawned);
  CHECK_FALSE(ours.run(Command{{"C:\\no\\such\\dir\\tool.exe"}}).spawned);
}

TEST_CASE("exit codes pass through") {
  WindowsProcessRunner runner;
  for (int code : {0, 1, 3, 42, 255, 256, 70000}) {
    Result r = runner.run(child({"exit", std::to_string(code)}));
    CHECK(r.spawned);
    CHECK(r.exit_code == code);
    CHECK(r.ok() == (code == 0));
  }
}

TEST_CASE("stdout and stderr are captured apart, byte for byte; stdin is NUL") {
  WindowsProcessRunner runner;
  Result r = runner.run(child({"bytes"}));
  REQUIRE(r.ok());
  CHECK(r.out == std::string("a\r\nb\n\0c", 7));
  CHECK(r.err == "err\n");
  Result in = runner.run(child({"stdin"}));
  CHECK(in.out == "0\n");
}

TEST_CASE("large output on both pipes does not deadlock") {
  WindowsProcessRunner runner;
  Result r = runner.run(child({"flood", "64"}));  // 4 MiB on each pipe, interleaved
  REQUIRE(r.ok());
  CHECK(r.out.size() == 4u << 20);
  CHECK(r.err.size() == 4u << 20);
  CHECK(r.out.find_first_not_of('o') == std::string::npos);
  CHECK(r.err.find_first_not_of('e') == std::string::npos);
}

TEST_CASE("cwd is the child's current directory") {
  wchar_t tmp[MAX_PATH];
  DWORD n = GetTempPathW(MAX_PATH, tmp);
  std::wstring dir(tmp, n);
  while (dir.size() > 3 && dir.back() == L'\\') dir.pop_back();
  WindowsProcessRunner runner;
  Command c = child({"cwd"});
  c.cwd = std::filesystem::path(dir);
  Result r = runner.run(c);
  REQUIRE(r.ok());
  CHECK(lines(r.out) == Lines{hex(narrow(dir))});
}

TEST_CASE("a windows_command_line goes to CreateProcess as it is") {
  WindowsProcessRunner runner;
  Command c;
  c.argv = {"ignored when the line is given"};
  c.windows_command_line = "\"" + child_path() + "\" argv \"a b\" c\\\\\"d e\"";
  Result r = runner.run(c);
  INFO(r.err);
  REQUIRE(r.ok());
  // The line is  "<child>" argv "a b" c\\"d e"  : two backslashes before a
  // quote are one backslash, and the quote opens a quoted part.
  CHECK(lines(r.out) == hex_lines({"a b", "c\\d e"}));
  auto words = sb::run::split_command_line(*c.windows_command_line);
  CHECK(lines(r.out) == hex_lines(std::vector<std::string>(words.begin() + 2, words.end())));
}

TEST_CASE("a build step's atomic output: cmd.exe runs the command, then move /y (cmd_run_then_move)") {
  WindowsProcessRunner runner;
  // Paths with what cmd.exe would otherwise split or redirect on.
  std::string dir = sb::run::win_join(sb::run::win_parent(child_path()), "step dir (a,b;c=d&e)");
  CreateDirectoryW(std::filesystem::path(dir).c_str(), nullptr);
  std::string temp = sb::run::win_join(dir, ".out.tmp"), output = sb::run::win_join(dir, "out.obj");
  DeleteFileW(std::filesystem::path(output).c_str());
  Command c;
  c.argv = {"cmd.exe"};
  c.windows_command_line =
      sb::run::cmd_run_then_move({child_path(), "write", temp, "text with spaces\\"}, temp, output);
  Result r = runner.run(c);
  INFO(*c.windows_command_line << "\n" << r.out << r.err);
  REQUIRE(r.ok());
  CHECK(GetFileAttributesW(std::filesystem::path(temp).c_str()) == INVALID_FILE_ATTRIBUTES);  // renamed
  {
    std::ifstream in(std::filesystem::path(output), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "text with spaces\\");  // the trailing backslash reached the program
  }                                       // closed: Windows deletes no open file
  // A failing command leaves no output: move never runs.
  DeleteFileW(std::filesystem::path(output).c_str());
  c.windows_command_line = sb::run::cmd_run_then_move({child_path(), "exit", "3"}, temp, output);
  r = runner.run(c);
  CHECK(r.exit_code == 3);
  CHECK(GetFileAttributesW(std::filesystem::path(output).c_str()) == INVALID_FILE_ATTRIBUTES);
}

TEST_CASE("batch files are refused in argv form, by name") {
  WindowsProcessRunner runner;
  // Only a file that exists is run: make one.
  wchar_t tmp[MAX_PATH];
  GetTempPathW(MAX_PATH, tmp);
  std::wstring bat = std::wstring(tmp) + L"sb_runner_test.bat";
  HANDLE h = CreateFileW(bat.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS, 0, nullptr);
  REQUIRE(h != INVALID_HANDLE_VALUE);
  CloseHandle(h);
  Result r = runner.run(Command{{narrow(bat), "x"}});
  CHECK_FALSE(r.spawned);
  CHECK(r.err.find("cmd.exe") != std::string::npos);
  DeleteFileW(bat.c_str());
}

TEST_CASE("find_program searches a Windows PATH with .exe") {
  std::string dir = sb::run::win_parent(child_path());
  auto p = find_program("sb_win_child", "C:\\does-not-exist;" + dir);
  REQUIRE(p);
  CHECK(p->filename() == "sb_win_child.exe");
  CHECK_FALSE(find_program("sb_win_child", "C:\\does-not-exist"));
}
