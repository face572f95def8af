#include <catch2/catch.hpp>

#include "sagebuild/common/corpus_test.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sagebuild/distinfo/entry_points.h"

using namespace sb;
using namespace sb::distinfo;

namespace {
bool has_rule(const Findings& f, std::string_view rule, Severity sev) {
  return std::any_of(f.begin(), f.end(), [&](const Finding& x) { return x.rule == rule && x.severity == sev; });
}
bool has_error(const Findings& f) {
  return std::any_of(f.begin(), f.end(), [](const Finding& x) { return x.severity == Severity::Error; });
}

// The vector file writes names with Python-ish escapes and optional quotes.
std::string unescape(std::string s) {
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char n = s[++i];
      out += n == 't' ? '\t' : n == 'r' ? '\r' : n == 'n' ? '\n' : n;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Vector {
  std::string line, section, verdict, source;
};
std::vector<Vector> load_vectors() {
  std::ifstream in(std::string(SAGEBUILD_CORPUS_DIR) + "/vectors/entry_point_names.tsv");
  REQUIRE(in);
  std::vector<Vector> v;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream row(line);
    Vector x;
    std::getline(row, x.line, '\t');
    std::getline(row, x.section, '\t');
    std::getline(row, x.verdict, '\t');
    std::getline(row, x.source, '\t');
    v.push_back(x);
  }
  return v;
}

// Findings for one vector, checked as an entry in each of its sections.
Findings judge(const Vector& v) {
  if (v.line.find("(raw bytes)") != std::string::npos)
    return parse_entry_points("[console_scripts]\n\xff\xfe\xfd\n", "ep").findings;
  if (v.line.find("(no '=')") != std::string::npos)
    return parse_entry_points("[console_scripts]\nfoo:main\n", "ep").findings;
  // Names are taken verbatim up to the delimiter (pip's tests pass names
  // directly, so " ../../inside" keeps its leading blank).
  std::size_t eq = v.line.find(" = ");
  std::size_t len = eq != std::string::npos ? eq : v.line.find('=');
  std::string name = unescape(v.line.substr(0, len));
  std::string value = v.line.substr(len + (eq != std::string::npos ? 3 : 1));
  Findings all;
  std::stringstream sections(v.section);
  std::string section;
  while (std::getline(sections, section, '|')) {
    if (section == "n/a") continue;
    auto f = check_entry_points({{section, name, value, 1}}, "ep");
    all.insert(all.end(), f.begin(), f.end());
  }
  return all;
}
}  // namespace

TEST_CASE("entry points: every case of vectors/entry_point_names.tsv") {
  SB_SKIP_WITHOUT_CORPUS();
  auto vectors = load_vectors();
  REQUIRE(vectors.size() >= 45);
  for (const auto& v : vectors) {
    INFO(v.line << " [" << v.section << "] expected " << v.verdict);
    Findings f = judge(v);
    // A row states the verdict of the tool whose test it comes from: PyPI's
    // upload check objects to anything we report; pip fails only on errors
    // (a name PyPI refuses, like 'pip:pip', is our Strict finding, which pip accepts).
    bool pip_row = v.source.rfind("pypa/pip", 0) == 0;
    bool rejected = pip_row ? has_error(f) : !f.empty();
    CHECK(rejected == (v.verdict.rfind("invalid", 0) == 0));
  }
}

TEST_CASE("entry points: INI parsing, case-sensitive keys, E1") {
  auto p = parse_entry_points("# c\n[console_scripts]\nFoo = a:b\nfoo = a:c [x]\n\n[other]\nk = v\n", "ep");
  CHECK(p.findings.empty());
  REQUIRE(p.entries.size() == 3);
  CHECK(p.entries[1].value == "a:c [x]");
  CHECK(p.entries[2].group == "other");
  CHECK(has_rule(parse_entry_points("k = v\n", "ep").findings, "E1", Severity::Strict));
  CHECK(has_rule(parse_entry_points("[s]\nk = v\nk = w\n", "ep").findings, "E1", Severity::Strict));
  CHECK(has_rule(parse_entry_points("[s\n", "ep").findings, "E1", Severity::Strict));
}

TEST_CASE("entry points: duplicates across scripts are E4 warnings") {
  auto f = check_entry_points({{"console_scripts", "tool", "m:a", 1},
                               {"gui_scripts", "tool", "m:b", 2},
                               {"console_scripts", "other", "m:c", 3}},
                              "ep", {"other"});
  CHECK(std::count_if(f.begin(), f.end(), [](auto& x) { return x.rule == "E4"; }) == 2);
  CHECK_FALSE(has_error(f));
}
