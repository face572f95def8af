#include <catch2/catch.hpp>

#include "sagebuild/platform/win_path.h"

using namespace sb::platform;

TEST_CASE("win_join puts exactly one backslash between parts") {
  CHECK(win_join("C:\\Program Files\\NVIDIA", "lib\\x64") == "C:\\Program Files\\NVIDIA\\lib\\x64");
  CHECK(win_join("C:\\cuda\\", "\\lib/x64") == "C:\\cuda\\lib\\x64");
  CHECK(win_join("C:/py/Lib/site-packages", "torch/lib") == "C:\\py\\Lib\\site-packages\\torch\\lib");
  CHECK(win_join("C:\\", "x") == "C:\\x");
  CHECK(win_join("C:", "x") == "C:\\x");
  CHECK(win_join("", "a/b") == "a\\b");
}

TEST_CASE("win_parent and win_filename split on either separator") {
  CHECK(win_parent("C:\\VS 2022\\bin\\Hostx64\\x64\\cl.exe") == "C:\\VS 2022\\bin\\Hostx64\\x64");
  CHECK(win_filename("C:\\VS 2022\\bin\\Hostx64\\x64\\cl.exe") == "cl.exe");
  CHECK(win_parent("C:\\x") == "C:\\");
  CHECK(win_parent("C:/a/b") == "C:\\a");
  CHECK(win_parent("cl.exe").empty());
  CHECK(win_filename("cl.exe") == "cl.exe");
  CHECK(win_parent("\\x") == "\\");
}

TEST_CASE("win_iequals ignores ASCII case only") {
  CHECK(win_iequals("Path", "PATH"));
  CHECK(win_iequals("C:\\Windows", "c:\\WINDOWS"));
  CHECK_FALSE(win_iequals("PATH", "PATHEXT"));
  CHECK_FALSE(win_iequals("\xc3\xa9", "\xc3\x89"));  // é vs É: not ASCII, left alone
}
