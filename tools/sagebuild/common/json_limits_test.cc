#include <catch2/catch.hpp>

#include <string>

#include "sagebuild/common/json_limits.h"

using namespace sb;

TEST_CASE("json_depth counts brackets outside strings") {
  CHECK(json_depth("1") == 0);
  CHECK(json_depth(R"({"a": [1, {"b": []}]})") == 4);
  CHECK(json_depth(R"({"a": "[[[[{{{{"})") == 1);            // inside a string
  CHECK(json_depth(R"({"a\"[[[": "\\", "b": [[]]})") == 3);  // escaped quote, escaped backslash
  CHECK(json_depth("]]]][") == 1);                           // malformed: counted as far as it goes
}

TEST_CASE("json_depth stops once past the limit, whatever the length") {
  std::string deep(400000, '[');  // the index crash reproducer's shape
  CHECK(json_depth(deep) == kMaxJsonDepth + 1);
  CHECK(json_depth(std::string(kMaxJsonDepth, '{')) == kMaxJsonDepth);
}
