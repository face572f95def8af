// A hostile build matrix (an alias bomb, deep nesting, a huge value, a huge
// file) is refused at file:line:column before any node is built or walked.
#include <catch2/catch.hpp>

#include <chrono>

#include "sagebuild/matrix/test_support.h"
#include "sagebuild/matrix/yaml_reader.h"

using namespace sb::matrix;
using namespace sb::matrix::testing;

namespace {

// "billion laughs": each level repeats the previous one ten times.
std::string alias_bomb(int levels) {
  std::string text =
      "pythons: &a0 [\"3.10\", \"3.10\", \"3.10\", \"3.10\", \"3.10\", \"3.10\", \"3.10\", \"3.10\", \"3.10\", "
      "\"3.10\"]\n";
  for (int i = 1; i <= levels; ++i) {
    text += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  return text;
}

}  // namespace

TEST_CASE("an alias bomb is refused where it passes the node limit, before it is expanded") {
  auto start = std::chrono::steady_clock::now();
  std::string file;
  std::string message = load_error("bomb.yaml", alias_bomb(9), &file);  // 10^10 values expanded
  INFO(message);
  CHECK(message.rfind(file + ":5:", 0) == 0);  // x4 repeats 10^5 values: past 100,000
  CHECK(message.find("expands to more than 100000 values") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("an alias inside the node it names (a cycle) is refused") {
  std::string file;
  std::string message = load_error("cycle.yaml", "pythons: &p [\"3.10\", *p]\n", &file);
  CHECK(message == file + ":1:22: error: an alias to a node that contains it (a cycle)");
}

TEST_CASE("nesting deeper than 64 is refused there") {
  std::string file;
  std::string deep = "pythons: " + std::string(100'000, '[') + std::string(100'000, ']') + "\n";
  std::string message = load_error("deep.yaml", deep, &file);
  CHECK(message == file + ":1:73: error: lists and mappings nested more than 64 deep");
}

TEST_CASE("a value over 64 KiB is refused at the value; a file over 1 MiB at its start") {
  std::string file;
  std::string big = "pythons: [\"" + std::string(100'000, '3') + "\"]\n";
  std::string message = load_error("big.yaml", big, &file);
  CHECK(message == file + ":1:11: error: a value of 100000 bytes; a build matrix value is at most 65536 bytes");
  std::string huge = "# " + std::string(2'000'000, 'x') + "\n" + kBase;
  message = load_error("huge.yaml", huge, &file);
  CHECK(message == file + ":1:1: error: the file is " + std::to_string(huge.size()) +
                       " bytes; a build matrix is at most 1048576 bytes");
}

TEST_CASE("a mapping with many keys is checked for duplicates in linear time") {
  std::string text = kBase;
  text += "exclude:\n";
  std::string many = "x:\n";
  for (int i = 0; i < 40'000; ++i) many += "  k" + std::to_string(i) + ": 1\n";
  many += "  k7: 2\n";
  auto start = std::chrono::steady_clock::now();
  std::string file;
  auto root = parse_yaml(many, "many.yaml");
  auto map = root.map({"x"}).required("x");
  CHECK_THROWS_WITH(map.named_entries("key"),
                    Catch::Contains("many.yaml:40002:3: error: duplicate key 'k7' (first defined at line 9)"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("the real build matrix is well inside the limits") { CHECK_NOTHROW(load_matrix(real_matrix_path())); }

TEST_CASE("a package version that is not PEP 440 is a ConfigError at the value, not an internal error") {
  // Found by fuzz_matrix: the wheel namer threw std::logic_error on it.
  std::string text = kBase;
  text.replace(text.find("version: 2.2.0"), 14,
               "version: 2\xae"
               "2.0");
  std::string file;
  std::string message = load_error("bad-version.yaml", text, &file);
  CHECK(message == file +
                       ":15:14: error: version '2\xae"
                       "2.0' of package 'sageattention' is not a PEP 440 version; "
                       "expected a version like 2.2.0");
  text = kBase;
  text.replace(text.find("version: 2.2.0"), 14, "version: 2.2.0+cu128");
  CHECK(load_error("local.yaml", text).find("carries a local label") != std::string::npos);
}
