#include <catch2/catch.hpp>

#include <algorithm>

#include "sagebuild/distinfo/wheel_file.h"

using namespace sb;
using namespace sb::distinfo;

namespace {
std::vector<std::string> rules(const Findings& f) {
  std::vector<std::string> r;
  for (const auto& x : f) r.push_back(std::string(1, severity_letter(x.severity)) + ":" + x.rule);
  std::sort(r.begin(), r.end());
  return r;
}
const WheelFileExpectations kExp{{"cp39-abi3-linux_x86_64"}, std::string("280.129")};
}  // namespace

TEST_CASE("WHEEL: our writer's output passes every check") {
  std::string text = write_wheel_file({"sagebuild 0.1.0", false, {"cp39-abi3-linux_x86_64"}, "280.129"});
  CHECK(text ==
        "Wheel-Version: 1.0\nGenerator: sagebuild 0.1.0\nRoot-Is-Purelib: false\n"
        "Tag: cp39-abi3-linux_x86_64\nBuild: 280.129\n");
  WheelFileInfo info;
  CHECK(check_wheel_file(text, "x/WHEEL", kExp, &info).empty());
  CHECK(info.root_is_purelib == false);
}

TEST_CASE("WHEEL: Wheel-Version rules (W2)") {
  auto with = [](std::string v) {
    return rules(check_wheel_file(
        "Wheel-Version: " + v + "\nGenerator: g\nRoot-Is-Purelib: false\nTag: cp39-abi3-linux_x86_64\nBuild: 280.129\n",
        "W", kExp));
  };
  CHECK(with("1.0").empty());
  CHECK(with("3.0") == std::vector<std::string>{"E:W2"});
  CHECK(with("0.1") == std::vector<std::string>{"S:W2"});
  CHECK(with("1.9") == std::vector<std::string>{"W:W2"});
  CHECK(with("one") == std::vector<std::string>{"E:W2"});
}

TEST_CASE("WHEEL: Generator, Root-Is-Purelib, Tag and Build (W3-W6)") {
  auto r = rules(check_wheel_file("Wheel-Version: 1.0\nRoot-Is-Purelib: True\nTag: py3-none-any\n", "W", kExp));
  CHECK(r == std::vector<std::string>{"S:W4", "S:W5", "S:W6", "W:W3"});
  // Tag order does not matter; the set does.
  WheelFileExpectations two{{"py2-none-any", "py3-none-any"}, std::nullopt};
  CHECK(check_wheel_file(
            "Wheel-Version: 1.0\nGenerator: g\nRoot-Is-Purelib: true\nTag: py3-none-any\nTag: py2-none-any\n", "W", two)
            .empty());
  CHECK(rules(check_wheel_file("Wheel-Version: 1.0\nGenerator: g\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                               "Tag: py2-none-any\nBuild: 1\n",
                               "W", two)) == std::vector<std::string>{"S:W6"});
}

TEST_CASE("WHEEL: malformed lines are W1 errors") {
  auto r =
      rules(check_wheel_file("Wheel-Version: 1.0\nGenerator: g\nRoot-Is-Purelib: false\n"
                             "Tag: cp39-abi3-linux_x86_64\nBuild: 280.129\ngarbage\n",
                             "W", kExp));
  CHECK(r == std::vector<std::string>{"E:W1"});
  // As pip reads WHEEL (Python's email parser): a malformed line ends the
  // fields, so those after it are missing too.
  auto hidden =
      rules(check_wheel_file("Wheel-Version: 1.0\ngarbage\nGenerator: g\nRoot-Is-Purelib: false\n"
                             "Tag: cp39-abi3-linux_x86_64\nBuild: 280.129\n",
                             "W", kExp));
  CHECK(std::find(hidden.begin(), hidden.end(), "E:W1") != hidden.end());
  CHECK(std::find(hidden.begin(), hidden.end(), "S:W5") != hidden.end());  // no Tag line where pip looks
}
