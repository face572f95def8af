// The reader against handcrafted archives, one defect each (rules Z1-Z10 of docs/verify-rules.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/archive/zip_test_util.h"
#include "sagebuild/common/error.h"

using namespace sb::zip;
using namespace sb::zip::testing;
using sb::Severity;

namespace {

struct Opened {
  TempFile file;
  std::unique_ptr<Reader> reader;
  explicit Opened(const std::string& bytes, Limits limits = {})
      : file(bytes), reader(Reader::open(file.path(), limits)) {}
  Reader* operator->() { return reader.get(); }
};

Opened open_zip(const TestZip& zip, Limits limits = {}) { return Opened(build_zip(zip), limits); }

// The findings of one rule, as "S:message" strings for readable failures.
std::vector<std::string> rule(Reader& r, const std::string& id) {
  std::vector<std::string> out;
  for (const auto& f : r.findings())
    if (f.rule == id) out.push_back(std::string(1, sb::severity_letter(f.severity)) + ":" + f.message);
  return out;
}

bool has(Reader& r, const std::string& id, Severity sev) {
  return std::any_of(r.findings().begin(), r.findings().end(),
                     [&](const sb::Finding& f) { return f.rule == id && f.severity == sev; });
}

std::string read_all(Reader& r, std::size_t i, ReadResult* result = nullptr) {
  std::string out;
  ReadResult rr = r.read(i, [&](const std::uint8_t* d, std::size_t n) {
    out.append(reinterpret_cast<const char*>(d), n);
    return true;
  });
  if (result) *result = rr;
  return out;
}

}  // namespace

TEST_CASE("a well-formed archive has no findings and reads back") {
  std::string big(300000, 'x');
  for (std::size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
  auto z = open_zip({{member("pkg/a.py", "print(1)\n"), member("pkg/big.bin", big, true)}});
  REQUIRE(z->usable());
  CHECK(z->findings().empty());
  REQUIRE(z->entries().size() == 2);
  CHECK(z->entries()[1].method == 8);
  CHECK(z->find("pkg/big.bin") == 1);
  CHECK(z->find("pkg/nope") == -1);
  ReadResult rr;
  CHECK(read_all(*z.reader, 1, &rr) == big);
  CHECK(rr.ok);
  CHECK(rr.bytes == big.size());
  std::string small, err;
  CHECK(z->read_small(0, 100, small, err));
  CHECK(small == "print(1)\n");
  CHECK_FALSE(z->read_small(1, 1000, small, err));
  CHECK(err.find("1000") != std::string::npos);
}

TEST_CASE("a sink can stop a read early") {
  auto z = open_zip({{member("a", std::string(1 << 20, 'a'), true)}});
  ReadResult rr = z->read(0, [](const std::uint8_t*, std::size_t) { return false; });
  CHECK(rr.stopped);
  CHECK_FALSE(rr.ok);
  CHECK(rr.bytes <= 256 * 1024);
}

TEST_CASE("files that are not zips get one clear Z1 error") {
  for (std::string bytes :
       {std::string(), std::string("PK"), std::string("hello, world\n", 13), std::string(70000, 'z')}) {
    Opened z(bytes);
    CHECK_FALSE(z->usable());
    CHECK(z->entries().empty());
    REQUIRE(rule(*z.reader, "Z1").size() == 1);
    CHECK(rule(*z.reader, "Z1")[0].rfind("E:not a zip archive", 0) == 0);
  }
}

TEST_CASE("a truncated archive is reported, never read past its end") {
  std::string whole = build_zip({{member("a.txt", std::string(5000, 'q'), true)}});
  for (std::size_t cut : {whole.size() - 1, whole.size() - 30, std::size_t(40), std::size_t(10)}) {
    Opened z(whole.substr(0, cut));
    CHECK((!z->usable() || has(*z.reader, "Z1", Severity::Error)));
  }
}

TEST_CASE("bytes before the first record, after the EOCD, and comments (Z1)") {
  auto prefixed = open_zip({{member("a", "1")}, "#!/bin/sh\n"});
  CHECK(rule(*prefixed.reader, "Z1") == std::vector<std::string>{"S:10 bytes before the first record"});
  // The CD offsets were written relative to the prefixed file, so the
  // members still read: a prefix is strictness, not corruption.
  CHECK(read_all(*prefixed.reader, 0) == "1");

  auto trailing = open_zip({{member("a", "1")}, "", "junk"});
  CHECK(rule(*trailing.reader, "Z1") == std::vector<std::string>{"S:4 bytes of trailing data after the EOCD record"});

  auto commented = open_zip({{member("a", "1")}, "", "", "hello"});
  CHECK(rule(*commented.reader, "Z1") == std::vector<std::string>{"W:archive comment of 5 bytes"});
}

TEST_CASE("CRC-32 and size mismatches fail the read and become Z2") {
  TestMember bad_crc = member("crc", "payload", true);
  bad_crc.crc = 1234;
  auto z = open_zip({{bad_crc}});
  CHECK(z->findings().empty());  // only reading can tell
  ReadResult rr;
  read_all(*z.reader, 0, &rr);
  CHECK_FALSE(rr.ok);
  CHECK(rr.error.find("CRC-32 mismatch") != std::string::npos);
  CHECK(has(*z.reader, "Z2", Severity::Error));

  // Declared smaller than the data: the read stops as soon as the data
  // outgrows the declaration, and delivers nothing beyond it.
  TestMember short_size = member("short", std::string(100000, 'b'), true);
  short_size.declared_usize = 10;
  auto s = open_zip({{short_size}});
  std::string got = read_all(*s.reader, 0, &rr);
  CHECK_FALSE(rr.ok);
  CHECK(got.size() <= 10);
  CHECK(rr.error.find("more than its declared 10 bytes") != std::string::npos);
}

TEST_CASE("size and ratio limits are enforced while decompressing (Z5)") {
  std::string zeros(8 << 20, '\0');
  Limits small;
  small.max_member_uncompressed = 1 << 20;
  auto z = open_zip({{member("bomb", zeros, true)}}, small);
  ReadResult rr;
  std::string got = read_all(*z.reader, 0, &rr);
  CHECK_FALSE(rr.ok);
  CHECK(got.size() <= (1u << 20));
  CHECK(has(*z.reader, "Z5", Severity::Error));

  Limits ratio;
  ratio.ratio_applies_above = 1 << 20;  // zeros compress ~1000:1
  auto r = open_zip({{member("bomb", zeros, true)}}, ratio);
  CHECK(has(*r.reader, "Z5", Severity::Strict));  // from the declared sizes
  read_all(*r.reader, 0, &rr);
  CHECK_FALSE(rr.ok);
  CHECK(rr.error.find("ratio") != std::string::npos);

  Limits total;
  total.max_total_uncompressed = 3 << 20;
  auto t = open_zip({{member("a", std::string(2 << 20, 'a')), member("b", std::string(2 << 20, 'b'))}}, total);
  read_all(*t.reader, 0, &rr);
  CHECK(rr.ok);
  read_all(*t.reader, 1, &rr);
  CHECK_FALSE(rr.ok);  // 4 MiB in all passes the 3 MiB budget
}

TEST_CASE("inflate that ends exactly at the input's end is drained, not truncated") {
  // As Python's zipfile writes it (zlib, level 9): 47 bytes of text and 1 MiB
  // of 'A'.  The input runs out while zlib still holds the last 47 bytes of
  // output: they come out on the next call, with no more input.
  std::string data = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n" + std::string(1 << 20, 'A');
  TestMember m = member("demo/data.txt", data, true);
  m.deflate_level = 9;
  auto z = open_zip({{m}});
  ReadResult rr;
  CHECK(read_all(*z.reader, 0, &rr) == data);
  CHECK(rr.ok);
  CHECK_FALSE(has(*z.reader, "Z2", Severity::Error));
}

TEST_CASE("the archive as a whole is bounded as PyPI bounds it (Z10)") {
  // 40 members of 4 MiB of zeros: each under the per-member bound, the
  // archive 160 MiB from ~170 KB.
  std::vector<TestMember> members;
  for (int i = 0; i < 40; ++i) members.push_back(member("z" + std::to_string(i), std::string(4 << 20, '\0'), true));
  auto z = open_zip({members});
  auto z10 = rule(*z.reader, "Z10");
  REQUIRE(z10.size() == 1);
  CHECK_THAT(z10[0], Catch::StartsWith("E:the members declare 167772160 bytes in all") &&
                         Catch::Contains("only the first 67108864 bytes are read"));
  CHECK_FALSE(has(*z.reader, "Z5", Severity::Strict));  // no member is over 64 MiB
  // Reading stops at the archive's budget (64 MiB here), not after 160 MiB.
  std::uint64_t read = 0;
  int failed = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    ReadResult rr;
    read += read_all(*z.reader, i, &rr).size();
    failed += !rr.ok;
  }
  CHECK(read <= (64u << 20));
  CHECK(failed >= 24);
  // An ordinary archive: no Z10.
  auto ok = open_zip({{member("a", std::string(1 << 20, 'a'), true)}});
  CHECK(rule(*ok.reader, "Z10").empty());
}

TEST_CASE("member names (Z6) and duplicates (Z3)") {
  struct Case {
    std::string name;
    std::uint16_t flags;
    std::string expect;  // "S:message prefix"
  };
  for (const Case& c : std::vector<Case>{
           {"a\\b.py", 0x800, "E:backslash"},
           {"/etc/passwd", 0x800, "E:absolute path"},
           {"C:/x", 0x800, "E:absolute path"},
           {"a/../../x", 0x800, "E:'..' component"},
           {"a\x01.py", 0x800, "E:control character"},
           {"bad\xff.py", 0x800, "E:name 'bad"},
           {"caf\xc3\xa9.py", 0, "S:non-ASCII name"},
           {"a//b.py", 0x800, "W:empty or '.' component"},
           {"./a.py", 0x800, "W:empty or '.' component"},
       }) {
    TestMember m = member(c.name, "x");
    m.flags = c.flags;
    auto z = open_zip({{m}});
    auto z6 = rule(*z.reader, "Z6");
    INFO(c.name);
    REQUIRE_FALSE(z6.empty());
    CHECK(z6[0].rfind(c.expect, 0) == 0);
  }
  TestMember ok = member("caf\xc3\xa9.py", "x");
  ok.flags = 0x800;
  CHECK(open_zip({{ok}})->findings().empty());

  auto dup = open_zip({{member("a.py", "1"), member("a.py", "2")}});
  CHECK(has(*dup.reader, "Z3", Severity::Error));
  auto fold = open_zip({{member("A.py", "1"), member("a.py", "2")}});
  CHECK(rule(*fold.reader, "Z6").size() == 1);
  CHECK(has(*fold.reader, "Z6", Severity::Warning));
}

TEST_CASE("encrypted, unknown methods, symlinks, descriptors (Z9, Z5, Z7, Z4)") {
  TestMember enc = member("secret", "x");
  enc.flags = 1;
  auto e = open_zip({{enc}});
  CHECK(has(*e.reader, "Z9", Severity::Error));
  CHECK(e->read(0, [](auto, auto) { return true; }).error.find("encrypted") != std::string::npos);

  TestMember lzma = member("m", "x");
  lzma.method = 14;
  auto l = open_zip({{lzma}});
  CHECK(rule(*l.reader, "Z5") == std::vector<std::string>{"E:compression method 14"});
  CHECK_FALSE(l->read(0, [](auto, auto) { return true; }).ok);

  TestMember link = member("bin/tool", "../lib/tool");
  link.external_attr = 0120777u << 16;
  auto s = open_zip({{link}});
  CHECK(s->entries()[0].is_symlink());
  CHECK(has(*s.reader, "Z7", Severity::Strict));
  link.made_by_os = 0;  // MS-DOS attributes: the high bits mean nothing
  CHECK(open_zip({{link}})->findings().empty());
}

TEST_CASE("local headers must match the central directory (Z3)") {
  TestMember renamed = member("good.py", "1");
  renamed.local_name = "evil.py";
  auto r = open_zip({{renamed}});
  CHECK(rule(*r.reader, "Z3") == std::vector<std::string>{"E:local header names 'evil.py'"});

  TestMember hidden = member("hidden.py", "1");
  hidden.in_central = false;
  auto h = open_zip({{member("a.py", "1"), hidden}});
  REQUIRE(rule(*h.reader, "Z3").size() == 1);
  CHECK(rule(*h.reader, "Z3")[0].find("'hidden.py'") != std::string::npos);

  TestMember nowhere = member("a.py", "1");
  nowhere.local_offset = 3;
  auto n = open_zip({{nowhere}});
  CHECK(has(*n.reader, "Z3", Severity::Error));
  CHECK_FALSE(n->read(0, [](auto, auto) { return true; }).ok);
}

TEST_CASE("overlapping members (quoted-overlap zip bombs) are flagged and refused") {
  // Two central entries sharing one local header: the same data counted twice.
  TestMember first = member("a.bin", std::string(100000, 'a'), true);
  TestMember second = first;
  second.name = "b.bin";
  second.local_offset = 0;
  second.local_name = "a.bin";
  std::string bytes = build_zip({{first}});
  auto z = open_zip({{first, second}});
  bool overlap = false;
  for (const auto& m : rule(*z.reader, "Z1")) overlap |= m.find("overlaps") != std::string::npos;
  CHECK(overlap);
  CHECK_FALSE(z->read(0, [](auto, auto) { return true; }).ok);
  CHECK_FALSE(z->read(1, [](auto, auto) { return true; }).ok);
}

TEST_CASE("absurd counts and offsets are findings, not allocations") {
  std::string bytes = build_zip({{member("a", "1")}});
  std::size_t eocd = bytes.size() - 22;
  std::string many = bytes;
  many[eocd + 8] = many[eocd + 10] = '\xff';
  many[eocd + 9] = many[eocd + 11] = '\x7f';  // 32767 entries in a 47-byte CD
  Opened m(many);
  CHECK_FALSE(m->usable());
  CHECK(rule(*m.reader, "Z1")[0].find("cannot hold 32767 entries") != std::string::npos);

  std::string far = bytes;
  far[eocd + 19] = '\x7f';  // CD offset ~2 GiB into a tiny file
  Opened f(far);
  CHECK_FALSE(f->usable());
  CHECK(has(*f.reader, "Z1", Severity::Error));

  Limits few;
  few.max_members = 1;
  auto two = open_zip({{member("a", "1"), member("b", "2")}}, few);
  CHECK_FALSE(two->usable());
  CHECK(rule(*two.reader, "Z1") == std::vector<std::string>{"E:2 members"});
}

TEST_CASE("opening a missing file throws IoError naming it") {
  CHECK_THROWS_AS(Reader::open("/nonexistent/x.whl"), sb::IoError);
}
