// Wheel file names against the shared corpus:
//  - vectors/filenames.tsv: 231 names from pip, packaging, installer, wheel,
//    auditwheel and PyPI tests. Our verdict (valid = no Error finding) must
//    agree with packaging HEAD, which is also what the upstream test states
//    except where upstream tests disagree with packaging; the failing rule
//    must be the one packaging names; the build tag must parse as packaging's.
//  - build_tag_ordering.tsv: pip's candidate order (version, then build tag).
//  - MANIFEST.tsv: the F-rule findings of every corpus wheel's name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "sagebuild/wheel/corpus_test_util.h"
#include "sagebuild/wheel/filename.h"

using namespace sb::wheel;

namespace {

// Names whose verdict we deliberately differ from packaging HEAD on, with the
// reason. Empty: we agree on all 231. An entry must name a row in the vectors.
const std::map<std::string, std::string> kDeliberateDifferences = {};

bool has_error(const sb::Findings& fs, std::string_view rule) {
  return std::any_of(fs.begin(), fs.end(),
                     [&](const sb::Finding& f) { return f.severity == sb::Severity::Error && f.rule == rule; });
}

bool has_finding(const sb::Findings& fs, std::string_view rule) {
  return std::any_of(fs.begin(), fs.end(), [&](const sb::Finding& f) { return f.rule == rule; });
}

std::string describe(const sb::Findings& fs) {
  std::ostringstream out;
  for (const auto& f : fs) out << sb::severity_letter(f.severity) << ":" << f.rule << " " << f.message << " | ";
  return out.str();
}

// packaging's reason for an invalid name -> the rule (docs/verify-rules.md) we report it under.
std::string rule_for_packaging_reason(const std::string& verdict) {
  const std::pair<const char*, const char*> map[] = {
      {"extension must be '.whl'", "F1"}, {"wrong number of parts", "F2"}, {"Invalid project name", "F3"},
      {"invalid version", "F4"},          {"Invalid build number", "F5"},  {"invalid tag component", "F6"},
  };
  for (auto [reason, rule] : map)
    if (verdict.find(reason) != std::string::npos) return rule;
  return {};
}

// "(280, '.129')" -> {"280", ".129"}; "" or "()" -> nullopt.
std::optional<BuildTagKey> packaging_build_tag(const std::string& cell) {
  if (cell.empty() || cell == "()") return std::nullopt;
  std::size_t comma = cell.find(',');
  std::size_t q1 = cell.find('\''), q2 = cell.rfind('\'');
  REQUIRE((cell.front() == '(' && comma != std::string::npos && q1 < q2));
  return BuildTagKey{cell.substr(1, comma - 1), cell.substr(q1 + 1, q2 - q1 - 1)};
}

}  // namespace

TEST_CASE("filenames: vectors/filenames.tsv verdicts agree with packaging") {
  SB_SKIP_WITHOUT_CORPUS();
  auto rows = testing::read_tsv(testing::corpus_dir() / "vectors" / "filenames.tsv");
  REQUIRE(rows.size() == 231);
  std::set<std::string> seen;
  int agreed = 0;
  for (const auto& row : rows) {
    std::string name = testing::py_unescape(row.at("filename"));
    seen.insert(name);
    const std::string& packaging = row.at("packaging_HEAD(26.4.dev0)");
    bool expect_valid = packaging == "valid";
    if (kDeliberateDifferences.count(name)) expect_valid = !expect_valid;
    auto parsed = parse_wheel_filename(name);
    INFO(row.at("filename") << " [upstream " << row.at("upstream_verdict") << ", packaging " << packaging << "] -> "
                            << describe(parsed.findings));
    CHECK(parsed.ok() == expect_valid);
    if (!expect_valid) {
      std::string rule = rule_for_packaging_reason(packaging);
      REQUIRE_FALSE(rule.empty());
      CHECK(has_error(parsed.findings, rule));
    }
    agreed += parsed.ok() == expect_valid;
  }
  CHECK(agreed == 231);
  for (const auto& [name, reason] : kDeliberateDifferences) {
    INFO(name << ": " << reason);
    CHECK(seen.count(name) == 1);
  }
}

TEST_CASE("filenames: build tags parse as packaging's (int, str) key") {
  SB_SKIP_WITHOUT_CORPUS();
  auto rows = testing::read_tsv(testing::corpus_dir() / "vectors" / "filenames.tsv");
  for (const auto& row : rows) {
    if (row.at("packaging_HEAD(26.4.dev0)") != "valid") continue;
    auto parsed = parse_wheel_filename(testing::py_unescape(row.at("filename")));
    INFO(row.at("filename"));
    REQUIRE(parsed.filename);
    auto expected = packaging_build_tag(row.at("packaging_build_tag"));
    const auto& ours = parsed.filename->build_tag;
    REQUIRE(ours.has_value() == expected.has_value());
    if (!ours) continue;
    auto key = build_tag_key(*ours);
    REQUIRE(key);
    CHECK(key->digits == expected->digits);
    CHECK(key->rest == expected->rest);
  }
}

TEST_CASE("filenames: names upstream tools refuse carry an F8 finding") {
  SB_SKIP_WITHOUT_CORPUS();
  // "valid-syntax;pypi-rejects" (platform tags PyPI refuses) and
  // "valid-syntax;auditwheel-rejects" (mixed architectures / libcs): valid
  // names, but a strict verifier must say something about the platform.
  auto rows = testing::read_tsv(testing::corpus_dir() / "vectors" / "filenames.tsv");
  int checked = 0;
  for (const auto& row : rows) {
    if (row.at("upstream_verdict").rfind("valid-syntax;", 0) != 0) continue;
    auto parsed = parse_wheel_filename(row.at("filename"));
    INFO(row.at("filename") << " -> " << describe(parsed.findings));
    CHECK(parsed.ok());
    CHECK(has_finding(parsed.findings, "F8"));
    ++checked;
  }
  CHECK(checked == 11);
}

TEST_CASE("filenames: F-rule findings of every corpus wheel match MANIFEST.tsv") {
  SB_SKIP_WITHOUT_CORPUS();
  auto rows = testing::read_tsv(testing::corpus_dir() / "MANIFEST.tsv");
  int wheels = 0;
  for (const auto& row : rows) {
    if (row.at("kind") != "wheel") continue;
    ++wheels;
    std::string path = row.at("path");
    std::set<std::string> expected;
    std::istringstream rules(row.at("strict_rules"));
    for (std::string r; rules >> r;)
      if (r.find(":F") != std::string::npos) expected.insert(r);
    auto parsed = parse_wheel_filename(path);
    std::set<std::string> ours;
    for (const auto& f : parsed.findings) {
      bool parse_failure = f.severity == sb::Severity::Error && f.rule <= "F6";
      // MANIFEST folds every parse failure of F1..F6 into one "E:F1-F6".
      ours.insert(parse_failure ? "E:F1-F6" : std::string(1, sb::severity_letter(f.severity)) + ":" + f.rule);
    }
    INFO(path << " -> " << describe(parsed.findings));
    CHECK(ours == expected);
  }
  CHECK(wheels > 100);
}

TEST_CASE("filenames: pip's candidate order and the spec's build-tag sort") {
  SB_SKIP_WITHOUT_CORPUS();
  auto rows = testing::read_tsv(testing::corpus_dir() / "vectors" / "build_tag_ordering.tsv");
  std::map<std::string, std::vector<testing::Row>> groups;
  for (const auto& row : rows) groups[row.at("group")].push_back(row);
  REQUIRE(groups.count("pip-build-tags"));
  REQUIRE(groups.count("spec-sort-probe"));
  for (auto& [group, members] : groups) {
    std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
      return std::stoi(a.at("rank(1=most preferred)")) < std::stoi(b.at("rank(1=most preferred)"));
    });
    std::vector<WheelFilename> names;
    for (const auto& m : members) {
      if (m.at("parsed_build_tag") == "(sdist)") continue;  // not a wheel
      auto parsed = parse_wheel_filename(m.at("filename"));
      INFO(m.at("filename"));
      REQUIRE(parsed.ok());
      auto expected = packaging_build_tag(m.at("parsed_build_tag"));
      auto key = parsed.filename->build_tag ? build_tag_key(*parsed.filename->build_tag) : std::nullopt;
      CHECK(key == expected);
      names.push_back(*parsed.filename);
    }
    // pip-tag-before-build is ordered by the installer's supported-tag
    // priority first; that order is not a property of the names alone.
    if (group == "pip-tag-before-build") continue;
    for (std::size_t i = 1; i < names.size(); ++i) {
      const auto &better = names[i - 1], &worse = names[i];
      INFO(group << ": " << better.str() << " before " << worse.str());
      auto by_version = better.version <=> worse.version;
      auto by_build = compare_build_tags(better.build_tag, worse.build_tag);
      CHECK((by_version > 0 || (by_version == 0 && by_build >= 0)));
      // Ties only where the parsed keys are equal (280 / 0280, 1 / 01 / 001).
      if (by_version == 0 && by_build == 0) CHECK(build_tag_key(*better.build_tag) == build_tag_key(*worse.build_tag));
    }
  }
}

TEST_CASE("filenames: findings for the sageattention naming mistakes") {
  struct Case {
    const char* name;
    const char* finding;
  };
  const Case cases[] = {
      {"SageAttention-2.2.0-cp312-cp312-linux_x86_64.whl", "W:F3"},
      {"sage.attention-2.2.0-cp312-cp312-manylinux_2_28_x86_64.whl", "W:F3"},
      {"qcodes_-0.1.0-py3-none-any.whl", "S:F3"},
      {"foo_b\xc3\xa1r-1.0-py3-none-any.whl", "S:F3"},
      {"foo__bar-1.0-py3-none-any.whl", "E:F3"},
      {"sageattention-v2.2.0-cp312-cp312-linux_x86_64.whl", "W:F4"},
      {"sageattention-2.2.0+CU128-cp312-cp312-linux_x86_64.whl", "W:F4"},
      {"sageattention-2.2.x-cp312-cp312-linux_x86_64.whl", "E:F4"},
      {"sageattention-2.2.0-abc-cp312-cp312-linux_x86_64.whl", "E:F5"},
      {"sageattention-2.2.0-cp312-cp312-manylinux_2_28_x86_64.manylinux_2_17_x86_64.whl", "W:F6"},
      {"sageattention-2.2.0-cp312-cp312-LINUX_X86_64.whl", "W:F6"},
      {"sageattention-2.2.0-cp312-cp312-linux_x86_64.whl", "W:F8"},
      {"sageattention-2.2.0-cp39-abi3-macosx_11_2_arm64.whl", "S:F8"},
      {"sageattention-2.2.0-py3-none-any.linux_x86_64.whl", "W:F8"},
      {"sageattention-2.2.0-py3-abi3-manylinux_2_28_x86_64.whl", "W:F9"},
      {"sageattention-2.2.0-cp313t-cp313t-manylinux_2_28_x86_64.whl", "W:F9"},
      {"sageattention-2.2.0-cp312-cp312-manylinux_2_28_x86_64.WHL", "E:F1"},
      {"sageattention-2.2.0-cp312-manylinux_2_28_x86_64.whl", "E:F2"},
      {"sageattention-2.2.0-py2.7-none-any.whl", "E:F6"},
  };
  for (const auto& c : cases) {
    auto parsed = parse_wheel_filename(c.name);
    INFO(c.name << " -> " << describe(parsed.findings));
    std::set<std::string> got;
    for (const auto& f : parsed.findings) {
      got.insert(std::string(1, sb::severity_letter(f.severity)) + ":" + f.rule);
      CHECK_FALSE(f.message.empty());
      CHECK_FALSE(f.expected.empty());
    }
    CHECK(got.count(c.finding) == 1);
  }
  auto clean = parse_wheel_filename("dist/sageattention-2.2.0-280.129-cp39-abi3-manylinux_2_28_x86_64.whl");
  INFO(describe(clean.findings));
  CHECK(clean.findings.empty());
  REQUIRE(clean.filename);
  CHECK(clean.filename->name == "sageattention");
  CHECK(clean.filename->version.str() == "2.2.0");
  CHECK(clean.filename->build_tag == std::optional<std::string>("280.129"));
  CHECK(clean.filename->expanded() == std::vector<Tag>{{"cp39", "abi3", "manylinux_2_28_x86_64"}});
  CHECK(clean.filename->str() == "sageattention-2.2.0-280.129-cp39-abi3-manylinux_2_28_x86_64.whl");
}

TEST_CASE("filenames: a huge compressed tag set is capped, not expanded") {
  std::string members;
  for (int i = 0; i < 40; ++i) members += (i ? ".p" : "p") + std::to_string(i);
  auto parsed = parse_wheel_filename("foo-1.0-" + members + "-" + members + "-" + members + ".whl");
  INFO(describe(parsed.findings));
  CHECK(has_error(parsed.findings, "F6"));
  CHECK(parse_wheel_filename("foo-1.0-" + members + "-" + members + "-" + members + ".whl", 64000).ok());
}

TEST_CASE("filenames: format_wheel_filename builds normalized names that parse cleanly") {
  auto version = parse_version("V2.2.0");
  REQUIRE(version);
  std::string name = format_wheel_filename("Sage-Attention", *version, std::string("280.129"),
                                           Tag{"cp312", "cp312", "manylinux_2_28_x86_64"});
  CHECK(name == "sage_attention-2.2.0-280.129-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK(parse_wheel_filename(name).findings.empty());

  TagSets sets{{"py3", "py2", "py3"}, {"none"}, {"manylinux_2_17_x86_64", "MANYLINUX2014_X86_64"}};
  name = format_wheel_filename("sageattn3", *parse_version("1.0.0+cu128torch2.9.0"), std::nullopt, sets);
  CHECK(name == "sageattn3-1.0.0+cu128torch2.9.0-py2.py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl");
  auto parsed = parse_wheel_filename(name);
  INFO(describe(parsed.findings));
  CHECK(parsed.findings.empty());
  REQUIRE(parsed.filename);
  CHECK(parsed.filename->expanded().size() == 4);
}

TEST_CASE("filenames: build tag order with numbers beyond 64 bits") {
  using S = std::optional<std::string>;
  CHECK((compare_build_tags(std::nullopt, S("0")) < 0));
  CHECK((compare_build_tags(std::nullopt, std::nullopt) == 0));
  CHECK((compare_build_tags(S("99999999999999999999999"), S("99999999999999999999998")) > 0));
  CHECK((compare_build_tags(S("100000000000000000000000"), S("99999999999999999999999")) > 0));
  CHECK((compare_build_tags(S("0001"), S("1")) == 0));
  CHECK((compare_build_tags(S("1"), S("1a")) < 0));
  CHECK((compare_build_tags(S("280.129"), S("280.13")) < 0));  // the rest compares as a string
  CHECK((compare_build_tags(S("000"), S("0")) == 0));
  std::string why;
  CHECK_FALSE(build_tag_key("abc", &why));
  CHECK(why.find("digit") != std::string::npos);
  CHECK_FALSE(build_tag_key("1-2", &why));
  CHECK_FALSE(build_tag_key("", &why));
}
