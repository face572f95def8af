#include <catch2/catch.hpp>

#include <algorithm>

#include "sagebuild/common/hash.h"
#include "sagebuild/distinfo/record.h"

using namespace sb;
using namespace sb::distinfo;

namespace {
bool has_rule(const Findings& f, std::string_view rule, Severity sev) {
  return std::any_of(f.begin(), f.end(), [&](const Finding& x) { return x.rule == rule && x.severity == sev; });
}
const std::string kEmpty = "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU";
}  // namespace

TEST_CASE("record: csv default dialect with quotes, CRLF and LF") {
  auto p = parse_record("a.py," + kEmpty + ",0\r\n\"we,ird \"\"q\"\".py\",,\nx/RECORD,,\n", "x/RECORD");
  CHECK(p.findings.empty());
  REQUIRE(p.rows.size() == 3);
  CHECK(p.rows[1].path == "we,ird \"q\".py");
  CHECK(p.rows[2].line == 3);
}

TEST_CASE("record: rows with the wrong field count are R2 errors") {
  auto p = parse_record("a.py,sha256=x\nb.py,a,1,extra\n\"open quote,,\n", "RECORD");
  CHECK(std::count_if(p.findings.begin(), p.findings.end(), [](auto& f) { return f.rule == "R2"; }) >= 3);
  CHECK(has_rule(p.findings, "R2", Severity::Error));
}

TEST_CASE("record: hash algorithms and encodings (R4, R5)") {
  Findings f;
  CHECK(check_row_hash({"a", kEmpty, "0", 1}, f));
  CHECK(f.empty());
  CHECK_FALSE(check_row_hash({"a", "md5=1B2M2Y8AsgTpgAmY7PhCfg", "0", 1}, f));
  CHECK(has_rule(f, "R4", Severity::Error));
  f.clear();
  CHECK_FALSE(check_row_hash({"a", "sha000=abc", "0", 1}, f));
  CHECK_FALSE(check_row_hash({"a", "47DEQpj8HBSa", "0", 1}, f));
  CHECK(f.size() == 2);
  f.clear();
  auto padded = check_row_hash({"a", kEmpty + "=", "0", 1}, f);
  REQUIRE(padded);
  CHECK(padded->padded);
  CHECK(has_rule(f, "R5", Severity::Strict));
  f.clear();
  CHECK_FALSE(check_row_hash({"a", "sha256=!!", "0", 1}, f));
  CHECK(has_rule(f, "R5", Severity::Error));
  f.clear();
  auto sha512 = check_row_hash(
      {"a", "sha512=z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg_SpIdNs6c5H0NE8XYXysP-DGNKHfuwvY7kxvUdBeoGlODJ6-SfaPg", "0", 1},
      f);
  REQUIRE(sha512);
  CHECK(sha512->digest.size() == 64);
}

TEST_CASE("record: listing vs archive (R3, R6, R7, R8, D9)") {
  ArchiveListing archive{{"p/__init__.py", "p-1.dist-info/RECORD", "p-1.dist-info/RECORD.jws", "extra.py"},
                         "p-1.dist-info/RECORD"};
  std::vector<RecordRow> rows = {{"p/__init__.py", kEmpty, "0", 1},
                                 {"p/__init__.py", kEmpty, "0", 2},
                                 {"gone.py", kEmpty, "0", 3},
                                 {"../evil.py", kEmpty, "0", 4},
                                 {"p/", "", "", 5},
                                 {"p-1.dist-info/RECORD", kEmpty, "12", 6},
                                 {"p-1.dist-info/RECORD.jws", kEmpty, "0", 7},
                                 {"/abs.py", kEmpty, "1x", 8}};
  Findings f = check_record(rows, archive);
  CHECK(has_rule(f, "R7", Severity::Error));    // duplicate, '..' and absolute
  CHECK(has_rule(f, "R3", Severity::Error));    // gone.py listed, extra.py unlisted
  CHECK(has_rule(f, "R8", Severity::Warning));  // directory row
  CHECK(has_rule(f, "R6", Severity::Error));    // RECORD hashed itself
  CHECK(has_rule(f, "D9", Severity::Error));    // signature listed
  CHECK(has_rule(f, "R5", Severity::Error));    // size "1x"
  auto unlisted = std::count_if(f.begin(), f.end(), [](auto& x) { return x.rule == "R3" && x.member == "extra.py"; });
  CHECK(unlisted == 1);

  Findings clean = check_record(
      {{"p/__init__.py", kEmpty, "0", 1}, {"extra.py", kEmpty, "0", 2}, {"p-1.dist-info/RECORD", "", "", 3}}, archive);
  CHECK(clean.empty());  // the unlisted RECORD.jws is D9's warning, raised by the layout check
}

TEST_CASE("record: the writer quotes like Python's csv and parses back") {
  std::vector<RecordRow> rows = {{"a,b.py", kEmpty, "0", 0}, {"q\"uote.py", kEmpty, "0", 0}, {"x/RECORD", "", "", 0}};
  std::string text = write_record(rows);
  CHECK(text.find("\"a,b.py\"," + kEmpty + ",0\n") == 0);
  CHECK(text.find("\"q\"\"uote.py\"") != std::string::npos);
  CHECK(text.substr(text.size() - 11) == "x/RECORD,,\n");
  auto p = parse_record(text, "x/RECORD");
  REQUIRE(p.rows.size() == 3);
  CHECK(p.rows[0].path == "a,b.py");
  CHECK(p.rows[1].path == "q\"uote.py");
}
