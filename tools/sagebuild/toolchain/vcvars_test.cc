#include <catch2/catch.hpp>

#include "sagebuild/run/win_cmdline.h"
#include "sagebuild/toolchain/vcvars.h"

using namespace sb::toolchain;

namespace {

// The environment before vcvars (as `set` prints it on a runner), and after
// `vcvars64.bat >nul && set`: CRLF line ends, mixed-case names, values with
// spaces, '=' and parentheses.
const char* kBefore =
    "ALLUSERSPROFILE=C:\\ProgramData\r\n"
    "ComSpec=C:\\Windows\\system32\\cmd.exe\r\n"
    "Path=C:\\Windows\\system32;C:\\Windows;C:\\Program Files\\Git\\cmd\\\r\n"
    "ProgramFiles(x86)=C:\\Program Files (x86)\r\n"
    "PROMPT=$P$G\r\n"
    "TEMP=C:\\Users\\RUNNER~1\\AppData\\Local\\Temp\r\n";

const char* kAfter =
    "ALLUSERSPROFILE=C:\\ProgramData\r\n"
    "ComSpec=C:\\Windows\\system32\\cmd.exe\r\n"
    "DevEnvDir=C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\Common7\\IDE\\\r\n"
    "INCLUDE=C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Tools\\MSVC\\"
    "14.44.35207\\include;C:\\Program Files (x86)\\Windows Kits\\10\\include\\10.0.26100.0\\ucrt;\r\n"
    "LIB=C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Tools\\MSVC\\"
    "14.44.35207\\lib\\x64;C:\\Program Files (x86)\\Windows Kits\\10\\lib\\10.0.26100.0\\ucrt\\x64\r\n"
    "LIBPATH=C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Tools\\MSVC\\"
    "14.44.35207\\lib\\x64\r\n"
    "PATH=C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Tools\\MSVC\\"
    "14.44.35207\\bin\\HostX64\\x64;C:\\WINDOWS\\system32;C:\\Windows;C:\\Program Files\\Git\\cmd\r\n"
    "ProgramFiles(x86)=C:\\Program Files (x86)\r\n"
    "PROMPT=$P$G\r\n"
    "VCToolsInstallDir=C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Tools\\"
    "MSVC\\14.44.35207\\\r\n"
    "VSCMD_ARG_app_plat=Desktop\r\n"
    "WindowsSdkDir=C:\\Program Files (x86)\\Windows Kits\\10\\\r\n"
    "__VSCMD_PREINIT_PATH=a=b;c==d\r\n";

}  // namespace

TEST_CASE("vcvars64 path and the command that captures its environment") {
  std::string bat = vcvars64_path("C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise");
  CHECK(bat ==
        "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Auxiliary\\Build\\"
        "vcvars64.bat");
  CHECK(vcvars_command_line(bat) == "cmd.exe /d /s /c \"\"" + bat + "\" >nul && set\"");
  CHECK_THROWS(vcvars_command_line("C:\\Users\\%USERNAME%\\vs\\vcvars64.bat"));
}

TEST_CASE("parse_set_output: names are case-insensitive, values keep '=' and spaces") {
  SetOutput after = parse_set_output(kAfter);
  CHECK(after.other_lines.empty());
  CHECK(after.env.size() == 13);
  REQUIRE(after.env.get("Path"));
  CHECK(after.env.get("path") == after.env.get("PATH"));
  CHECK(*after.env.get("__VSCMD_PREINIT_PATH") == "a=b;c==d");
  CHECK(*after.env.get("programfiles(x86)") == "C:\\Program Files (x86)");
  CHECK(missing_vcvars_names(after.env).empty());
}

TEST_CASE("parse_set_output keeps what is not a variable, for the error message") {
  SetOutput out = parse_set_output("[ERROR:vcvars.bat] Invalid argument found : x86_oops\n\n=C:=C:\\work\nA=1\nB=\n");
  CHECK(out.other_lines ==
        std::vector<std::string>{"[ERROR:vcvars.bat] Invalid argument found : x86_oops", "=C:=C:\\work"});
  CHECK(*out.env.get("A") == "1");
  CHECK(out.env.get("B")->empty());
  CHECK(missing_vcvars_names(out.env) == vcvars_required_names());
}

TEST_CASE("Environment keeps the first spelling of a name") {
  Environment env;
  env.set("Path", "a");
  env.set("PATH", "b");
  REQUIRE(env.size() == 1);
  CHECK(env.vars()[0].name == "Path");
  CHECK(*env.get("pAtH") == "b");
  CHECK(env.remove("PATH"));
  CHECK_FALSE(env.remove("PATH"));
}

TEST_CASE("diff_environment yields what vcvars added") {
  Environment before = parse_set_output(kBefore).env;
  Environment after = parse_set_output(kAfter).env;
  auto changes = diff_environment(before, after);
  std::vector<std::string> names;
  for (const auto& c : changes) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"DevEnvDir", "INCLUDE", "LIB", "LIBPATH", "PATH", "VCToolsInstallDir",
                                          "VSCMD_ARG_app_plat", "WindowsSdkDir", "__VSCMD_PREINIT_PATH", "TEMP"});
  const EnvChange& path = changes[4];
  // C:\WINDOWS\system32 and ...\Git\cmd (without its trailing '\') were
  // there before: only the MSVC bin directory is new.
  CHECK(path.added_entries == std::vector<std::string>{"C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\"
                                                       "VC\\Tools\\MSVC\\14.44.35207\\bin\\HostX64\\x64"});
  CHECK(changes[1].added_entries.size() == 2);  // INCLUDE: the trailing ';' adds nothing
  CHECK(changes[0].added_entries.empty());      // DevEnvDir is not a list
  CHECK(changes.back().removed);                // TEMP vanished in this recording
}

TEST_CASE("split_path_list drops empty entries") {
  CHECK(split_path_list(";a;;b c;") == std::vector<std::string>{"a", "b c"});
  CHECK(split_path_list("").empty());
}
