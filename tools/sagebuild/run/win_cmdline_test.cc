#include <catch2/catch.hpp>

#include <random>

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_cmdline.h"

using namespace sb::run;
using Argv = std::vector<std::string>;

TEST_CASE("quote_argument follows the MSVC runtime rules") {
  CHECK(quote_argument("plain") == "plain");
  CHECK(quote_argument("") == "\"\"");
  CHECK(quote_argument("a b") == "\"a b\"");
  CHECK(quote_argument("tab\there") == "\"tab\there\"");
  CHECK(quote_argument("say \"hi\"") == "\"say \\\"hi\\\"\"");
  // Backslashes are literal unless a quote follows them.
  CHECK(quote_argument("C:\\Program Files\\x") == "\"C:\\Program Files\\x\"");
  CHECK(quote_argument("C:\\no\\spaces\\") == "C:\\no\\spaces\\");
  // ...so a trailing run before the closing quote is doubled,
  CHECK(quote_argument("C:\\a dir\\") == "\"C:\\a dir\\\\\"");
  // and a run before an embedded quote becomes 2n+1.
  CHECK(quote_argument("a\\\"b") == "\"a\\\\\\\"b\"");
  CHECK(quote_argument("/LIBPATH:C:\\Program Files\\torch\\lib") == "\"/LIBPATH:C:\\Program Files\\torch\\lib\"");
}

TEST_CASE("split_command_line reads the documented examples") {
  // The table in Microsoft's "Parsing C++ command-line arguments".
  CHECK(split_command_line("\"abc\" d e", FirstWord::Argument) == Argv{"abc", "d", "e"});
  CHECK(split_command_line("a\\\\b d\"e f\"g h", FirstWord::Argument) == Argv{"a\\\\b", "de fg", "h"});
  CHECK(split_command_line("a\\\\\\\"b c d", FirstWord::Argument) == Argv{"a\\\"b", "c", "d"});
  CHECK(split_command_line("a\\\\\\\\\"b c\" d e", FirstWord::Argument) == Argv{"a\\\\b c", "d", "e"});
  CHECK(split_command_line("a\"b\"\" c d", FirstWord::Argument) == Argv{"ab\" c d"});
  CHECK(split_command_line("  lead   trail  ", FirstWord::Argument) == Argv{"lead", "trail"});
  CHECK(split_command_line("x \"\" y", FirstWord::Argument) == Argv{"x", "", "y"});
  CHECK(split_command_line("", FirstWord::Argument).empty());
}

TEST_CASE("the program name takes backslashes literally") {
  CHECK(split_command_line("\"C:\\Program Files\\nvcc.exe\" -c x.cu") ==
        Argv{"C:\\Program Files\\nvcc.exe", "-c", "x.cu"});
  CHECK(split_command_line("C:\\dir\\\"q a\" b") == Argv{"C:\\dir\\q a", "b"});
  CHECK(split_command_line("") == Argv{""});
}

TEST_CASE("join_command_line quotes the program and each argument") {
  Argv argv{"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.9\\bin\\nvcc.exe", "-Xcompiler",
            "/Zc:preprocessor", "-DNAME=\"x y\"", ""};
  std::string line = join_command_line(argv);
  CHECK(line ==
        "\"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.9\\bin\\nvcc.exe\" "
        "-Xcompiler /Zc:preprocessor \"-DNAME=\\\"x y\\\"\" \"\"");
  CHECK(split_command_line(line) == argv);
  CHECK_THROWS_AS(join_command_line({}), sb::UsageError);
  CHECK_THROWS_WITH(join_command_line({"a\"b.exe"}), Catch::Contains("without quotes"));
}

TEST_CASE("quote then split gives back any argv (property)") {
  // Characters that matter to the rules, plus ordinary and non-ASCII bytes.
  const std::vector<std::string> pieces{"\\", "\\\\", "\"", " ", "\t",   "a",    "Z",  "\xc3\xa9",
                                        "%",  "&",    "^",  "'", "\"\"", "\\\"", "x y"};
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1), len(0, 8), count(0, 5);
  for (int trial = 0; trial < 5000; ++trial) {
    Argv argv{"C:\\Program Files\\tool.exe"};
    for (std::size_t n = count(rng); n > 0; --n) {
      std::string arg;
      for (std::size_t k = len(rng); k > 0; --k) arg += pieces[pick(rng)];
      argv.push_back(arg);
    }
    std::string line = join_command_line(argv);
    INFO("line: " << line);
    REQUIRE(split_command_line(line) == argv);
    Argv rest(argv.begin() + 1, argv.end());
    std::string args_only;
    for (const auto& a : rest) args_only += quote_argument(a) + " ";
    REQUIRE(split_command_line(args_only, FirstWord::Argument) == rest);
  }
}

TEST_CASE("cmd.exe arguments: quoted when needed, refused when unsafe") {
  CHECK(cmd_argument("x64") == "x64");
  CHECK(cmd_argument("a&b") == "\"a&b\"");
  CHECK(cmd_argument("C:\\Program Files (x86)\\x") == "\"C:\\Program Files (x86)\\x\"");
  CHECK(cmd_argument("") == "\"\"");
  CHECK_FALSE(cmd_unsafe_reason("C:\\VS\\vcvars64.bat"));
  CHECK(cmd_unsafe_reason("%PATH%")->find("'%'") != std::string::npos);
  CHECK(cmd_unsafe_reason("a!b")->find("delayed") != std::string::npos);
  CHECK(cmd_unsafe_reason("a\"&calc")->find("quoting") != std::string::npos);
  CHECK(cmd_unsafe_reason("a\nb"));
  CHECK_THROWS_WITH(cmd_argument("100%"), Catch::Contains("refusing to pass '100%'"));
}

TEST_CASE("cmd_batch_line keeps the batch path's own quotes under /s") {
  std::string line = cmd_batch_line(
      "C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\Auxiliary\\Build\\"
      "vcvars64.bat",
      {}, ">nul && set");
  CHECK(line ==
        "cmd.exe /d /s /c \"\"C:\\Program Files\\Microsoft Visual Studio\\2022\\Enterprise\\VC\\"
        "Auxiliary\\Build\\vcvars64.bat\" >nul && set\"");
  CHECK(cmd_batch_line("C:\\x.bat", {"-vcvars_ver=14.3", "a b"}, "") ==
        "cmd.exe /d /s /c \"\"C:\\x.bat\" \"-vcvars_ver=14.3\" \"a b\"\"");
  CHECK_THROWS_AS(cmd_batch_line("C:\\%TEMP%\\x.bat", {}, ""), sb::UsageError);
  CHECK_THROWS_AS(cmd_batch_line("C:\\x.bat", {"a\"b"}, ""), sb::UsageError);
}
