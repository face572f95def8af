#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "sagebuild/distinfo/metadata.h"

using namespace sb;
using namespace sb::distinfo;

namespace {
std::vector<std::string> rules(const Findings& f) {
  std::vector<std::string> r;
  for (const auto& x : f) r.push_back(std::string(1, severity_letter(x.severity)) + ":" + x.rule);
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

MetadataExpectations expect(std::set<std::string> members = {}) {
  return {"sageattention", *wheel::parse_version("2.2.0"), "sageattention-2.2.0.dist-info",
          [members](std::string_view m) { return members.count(std::string(m)) > 0; }};
}

std::vector<std::string> check(const std::string& text, std::set<std::string> members = {}) {
  return rules(check_metadata(text, "M", expect(members)));
}
}  // namespace

TEST_CASE("METADATA: our writer's output is clean and pins torch") {
  MetadataSpec s{"sageattention",       "2.2.0",
                 "Quantized attention", ">=3.9",
                 {"torch==2.11.0"},     "Apache-2.0",
                 {"LICENSE"},           {{"Source", "https://github.com/thu-ml/SageAttention"}},
                 "# SageAttention\n",   "text/markdown"};
  std::string text = write_metadata(s);
  CHECK(text.find("Metadata-Version: 2.4\n") == 0);
  CHECK(text.find("Requires-Dist: torch==2.11.0\n") != std::string::npos);
  CHECK(text.find("License-File: LICENSE\n") != std::string::npos);
  CHECK(text.find("\n\n# SageAttention\n") != std::string::npos);
  MetadataInfo info;
  auto f = check_metadata(text, "M", expect({"sageattention-2.2.0.dist-info/licenses/LICENSE"}), &info);
  CHECK(f.empty());
  CHECK(info.requires_dist == std::vector<std::string>{"torch==2.11.0"});
  // Without the license file in the archive, M7 fires.
  CHECK(check(text) == std::vector<std::string>{"E:M7"});
}

TEST_CASE("METADATA: Metadata-Version legal set (M2)") {
  auto mv = [](std::string v) { return check("Metadata-Version: " + v + "\nName: sageattention\nVersion: 2.2.0\n"); };
  for (std::string ok : {"1.0", "1.1", "1.2", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6"}) CHECK(mv(ok).empty());
  CHECK(mv("2.0") == std::vector<std::string>{"S:M2"});
  CHECK(mv("1.3") == std::vector<std::string>{"S:M2"});
  CHECK(mv("3.0") == std::vector<std::string>{"E:M2"});
  CHECK(check("Name: sageattention\nVersion: 2.2.0\n") == std::vector<std::string>{"E:M2"});
}

TEST_CASE("METADATA: Name and Version against the file name (M3, M4)") {
  CHECK(check("Metadata-Version: 2.1\nName: SageAttention\nVersion: 2.2\n").empty());  // canonical name; 2.2 == 2.2.0
  CHECK(check("Metadata-Version: 2.1\nName: Sage_Attention\nVersion: 2.2.0\n") == std::vector<std::string>{"E:M3"});
  CHECK(check("Metadata-Version: 2.1\nName: SAGEATTENTION\nVersion: 2.2.0.0\n").empty());  // 2.2.0 == 2.2.0.0
  CHECK(check("Metadata-Version: 2.1\nName: sageattention\nVersion: 2.3\n") == std::vector<std::string>{"E:M4"});
  CHECK(check("Metadata-Version: 2.1\nName: -bad-\nVersion: 2.2.0\n") == std::vector<std::string>{"E:M3"});
  CHECK(check("Metadata-Version: 2.1\nName: sageattention\nVersion: not a version\n") ==
        std::vector<std::string>{"E:M4"});
}

TEST_CASE("METADATA: a repeated Name or Version is an error, as packaging refuses it") {
  CHECK(check("Metadata-Version: 2.1\nName: sageattention\nName: other\nVersion: 2.2.0\n") ==
        std::vector<std::string>{"E:M3"});
  CHECK(check("Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0\nversion: 9\n") ==
        std::vector<std::string>{"E:M4"});
  auto f =
      check_metadata("Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0\nVersion: 2.2.0\n", "M", expect());
  REQUIRE(f.size() == 1);
  CHECK(f[0].message == "2 Version fields");
  CHECK(f[0].expected == "exactly one Version field");
}

TEST_CASE("METADATA: a Requires-Dist behind a bare CR is read, as pip reads it") {
  MetadataInfo info;
  check_metadata("Metadata-Version: 2.1\nName: sageattention\rRequires-Dist: torch>=2.10\nVersion: 2.2.0\n", "M",
                 expect(), &info);
  CHECK(info.requires_dist == std::vector<std::string>{"torch>=2.10"});
  CHECK(info.name == "sageattention");
}

TEST_CASE("METADATA: fields before their Metadata-Version (M5) and unknown fields (M9)") {
  CHECK(check("Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0\nLicense-File: LICENSE\n") ==
        std::vector<std::string>{"W:M5"});
  CHECK(check("Metadata-Version: 1.2\nName: sageattention\nVersion: 2.2.0\nProvides-Extra: x\n") ==
        std::vector<std::string>{"W:M5"});
  CHECK(check("Metadata-Version: 2.4\nName: sageattention\nVersion: 2.2.0\nX-Made-Up: 1\n") ==
        std::vector<std::string>{"S:M9"});
}

TEST_CASE("METADATA: Requires-Dist / Requires-Python syntax (M6), licenses (M7), UTF-8 (M1)") {
  std::string head = "Metadata-Version: 2.4\nName: sageattention\nVersion: 2.2.0\n";
  CHECK(check(head + "Requires-Dist: torch (==2.8.0)\nRequires-Python: >=3.9\n").empty());
  CHECK(check(head + "Requires-Dist: simple==0.1 === ???\n") == std::vector<std::string>{"E:M6"});
  CHECK(check(head + "Requires-Python: >>3\n") == std::vector<std::string>{"S:M6"});
  CHECK(check(head + "License: MIT\nLicense-Expression: MIT\n") == std::vector<std::string>{"S:M7"});
  CHECK(check(head + "Summary: caf\xe9\n") == std::vector<std::string>{"E:M1"});
}
