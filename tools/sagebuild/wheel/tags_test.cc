// PEP 425 tags: vectors/tags.tsv (packaging's tag tests), expansion and its
// cap, F6 syntax findings, ABI coherence (F9), the tags of our builds.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sagebuild/wheel/corpus_test_util.h"
#include "sagebuild/wheel/tags.h"

using namespace sb::wheel;

namespace {

bool has(const sb::Findings& fs, std::string_view rule, sb::Severity sev) {
  return std::any_of(fs.begin(), fs.end(), [&](const sb::Finding& f) { return f.rule == rule && f.severity == sev; });
}

TagSets sets(std::string_view triple) {
  auto s = split_tag_triple(triple);
  REQUIRE(s.has_value());
  return *s;
}

}  // namespace

TEST_CASE("tags: vectors/tags.tsv verdicts") {
  SB_SKIP_WITHOUT_CORPUS();
  auto rows = testing::read_tsv(testing::corpus_dir() / "vectors" / "tags.tsv");
  CHECK(rows.size() == 16);
  for (const auto& row : rows) {
    const std::string& tag = row.at("tag");
    bool valid = row.at("upstream_verdict") == "valid";
    // packaging agrees with its own tests on every row.
    REQUIRE((row.at("packaging_HEAD").rfind("valid", 0) == 0) == valid);
    std::string why;
    auto tags = parse_tags(tag, kMaxExpandedTags, &why);
    INFO(tag << " (" << row.at("reason") << "): " << why);
    CHECK(tags.has_value() == valid);
    if (!valid) CHECK(why.find("expected") != std::string::npos);
  }
}

TEST_CASE("tags: expansion order, lowercasing and the cap") {
  auto tags = parse_tags("py2.py3-none-any");
  REQUIRE(tags);
  REQUIRE(tags->size() == 2);
  CHECK((*tags)[0].str() == "py2-none-any");
  CHECK((*tags)[1].str() == "py3-none-any");

  tags = parse_tags("cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64");
  REQUIRE(tags);
  CHECK(tags->size() == 2);
  CHECK((*tags)[1] == Tag{"cp312", "cp312", "manylinux_2_17_x86_64"});

  tags = parse_tags("CP312-CP312-LINUX_X86_64");
  REQUIRE(tags);
  CHECK((*tags)[0].str() == "cp312-cp312-linux_x86_64");

  // 20 x 20 x 20 = 8000 tags: over the default cap, under an explicit one.
  std::string members;
  for (int i = 0; i < 20; ++i) members += (i ? ".p" : "p") + std::to_string(i);
  std::string big = members + "-" + members + "-" + members;
  std::string why;
  CHECK_FALSE(parse_tags(big, kMaxExpandedTags, &why));
  CHECK(why.find("more than 4096") != std::string::npos);
  auto expanded = parse_tags(big, 8000);
  REQUIRE(expanded);
  CHECK(expanded->size() == 8000);
}

TEST_CASE("tags: F6 warnings for case and order, errors for empty members") {
  CHECK(has(check_tag_sets(sets("py3.py2-none-any")), "F6", sb::Severity::Warning));
  CHECK(has(check_tag_sets(sets("cp312-cp312-manylinux_2_28_x86_64.manylinux_2_17_x86_64")), "F6",
            sb::Severity::Warning));
  CHECK(check_tag_sets(sets("cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64")).empty());
  CHECK(has(check_tag_sets(sets("cp312-cp312-LINUX_X86_64")), "F6", sb::Severity::Warning));
  CHECK_FALSE(has(check_tag_sets(sets("cp312-cp312-LINUX_X86_64")), "F6", sb::Severity::Error));
  CHECK(has(check_tag_sets(sets("py3-none.-any")), "F6", sb::Severity::Error));
  CHECK(has(check_tag_sets(sets("py2.7-none-any")), "F6", sb::Severity::Error));
  CHECK(check_tag_sets(sets("py2.py3-none-any")).empty());
}

TEST_CASE("tags: F9 ABI coherence") {
  CHECK(check_abi_coherence(sets("cp39-abi3-manylinux_2_28_x86_64")).empty());
  CHECK(check_abi_coherence(sets("cp34.cp35.cp36-abi3-any")).empty());
  CHECK(check_abi_coherence(sets("cp312-cp312-any")).empty());
  CHECK(check_abi_coherence(sets("cp27-cp27mu-any")).empty());
  CHECK(check_abi_coherence(sets("cp313-cp313t-any")).empty());
  CHECK(check_abi_coherence(sets("pp310-pypy310_pp73-any")).empty());
  CHECK(check_abi_coherence(sets("py3-none-any")).empty());
  CHECK(has(check_abi_coherence(sets("py3-abi3-any")), "F9", sb::Severity::Warning));
  CHECK(has(check_abi_coherence(sets("cp313t-abi3-any")), "F9", sb::Severity::Warning));
  CHECK(has(check_abi_coherence(sets("cp312-cp311-any")), "F9", sb::Severity::Warning));
  CHECK(has(check_abi_coherence(sets("py3-cp312-any")), "F9", sb::Severity::Warning));
  // cp313t is the ABI, not the interpreter: pip would never select this wheel.
  CHECK(has(check_abi_coherence(sets("cp313t-cp313t-any")), "F9", sb::Severity::Warning));
}

TEST_CASE("tags: interpreter and ABI of a build without running Python") {
  auto t = cpython_tags("3.12", AbiMode::per_interpreter);
  REQUIRE(t);
  CHECK(t->interpreter + "-" + t->abi == "cp312-cp312");
  t = cpython_tags("3.12", AbiMode::abi3);
  REQUIRE(t);
  CHECK(t->interpreter + "-" + t->abi == "cp39-abi3");
  t = cpython_tags("3.13t", AbiMode::per_interpreter);
  REQUIRE(t);
  CHECK(t->interpreter + "-" + t->abi == "cp313-cp313t");
  t = cpython_tags("3.10", AbiMode::abi3, "3.10");
  REQUIRE(t);
  CHECK(t->interpreter == "cp310");
  std::string why;
  CHECK_FALSE(cpython_tags("3.8", AbiMode::abi3, "3.9", &why));
  CHECK_FALSE(cpython_tags("3.12t", AbiMode::per_interpreter, "3.9", &why));
  CHECK(why.find("3.13") != std::string::npos);
  CHECK_FALSE(cpython_tags("3.13t", AbiMode::abi3, "3.9", &why));  // no limited API without the GIL
  CHECK(to_string(AbiMode::abi3) == "abi3");
  CHECK(to_string(AbiMode::per_interpreter) == "per-interpreter");
  for (const char* bad : {"3", "3.", "312", "3.12.1", "three.twelve", ""})
    CHECK_FALSE(cpython_tags(bad, AbiMode::per_interpreter, "3.9", &why));
}
