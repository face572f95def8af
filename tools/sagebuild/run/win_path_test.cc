#include <catch2/catch.hpp>

#include <algorithm>

#include "sagebuild/run/win_path.h"

using namespace sb::run;

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

TEST_CASE("win_search_path: the child's PATH, with .exe/.com for bare names") {
  std::vector<std::string> probed;
  auto exists_in = [&](std::vector<std::string> files) {
    return [&probed, files](const std::string& p) {
      probed.push_back(p);
      return std::find(files.begin(), files.end(), p) != files.end();
    };
  };
  const std::vector<std::string> exts{".exe", ".com"};
  CHECK(win_search_path("ninja", "C:\\a;;\"C:\\Program Files\\b\";C:\\c", exts,
                        exists_in({"C:\\Program Files\\b\\ninja.exe", "C:\\c\\ninja.exe"})) ==
        "C:\\Program Files\\b\\ninja.exe");
  CHECK(probed == std::vector<std::string>{"C:\\a\\ninja.exe", "C:\\a\\ninja.com", "C:\\Program Files\\b\\ninja.exe"});
  // A name with an extension is tried as it is.
  CHECK(win_search_path("python.exe", "C:\\py", exts, exists_in({"C:\\py\\python.exe"})) == "C:\\py\\python.exe");
  CHECK_FALSE(win_search_path("python.exe", "C:\\py", exts, exists_in({"C:\\py\\python.exe.exe"})));
  // A directory part: not searched.
  CHECK(win_search_path("C:\\x\\nvcc.exe", "C:\\a", exts, exists_in({})) == "C:\\x\\nvcc.exe");
  CHECK(win_search_path("bin/nvcc", "C:\\a", exts, exists_in({})) == "bin/nvcc");
  CHECK(win_search_path("D:tool", "C:\\a", exts, exists_in({})) == "D:tool");
  CHECK_FALSE(win_search_path("ninja", "C:\\a", exts, exists_in({})));
  CHECK_FALSE(win_search_path("", "C:\\a", exts, exists_in({"C:\\a\\.exe"})));
}
