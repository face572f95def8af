#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "sagebuild/archive/member_source.h"
#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/archive/zip_test_util.h"

using namespace sb::zip;
using namespace sb::zip::testing;

namespace {

std::string pattern(std::size_t n) {
  std::mt19937 rng(7);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>('a' + rng() % 8);
  return s;
}

TestMember member(std::string name, std::string data, bool deflate) {
  TestMember m;
  m.name = std::move(name);
  m.data = std::move(data);
  m.deflate = deflate;
  return m;
}

}  // namespace

TEST_CASE("random access to stored and deflated members returns the member's bytes") {
  std::string data = pattern(1'000'000);
  TempFile f(build_zip({{member("s.bin", data, false), member("d.bin", data, true)}}));
  auto reader = Reader::open(f.path());
  for (std::size_t i : {0u, 1u}) {
    std::string error;
    auto src = reader->open_member(i, error);
    REQUIRE(src);
    CHECK(src->size() == data.size());
    // Forward, backward, across window boundaries, and the very end.
    for (std::uint64_t off : {0ull, 500000ull, 262140ull, 10ull, 999990ull, 262144ull * 3 - 3}) {
      char buf[10];
      INFO("member " << i << " offset " << off);
      REQUIRE(src->read(off, buf, sizeof buf));
      CHECK(std::string(buf, sizeof buf) == data.substr(off, sizeof buf));
    }
    char one;
    CHECK_FALSE(src->read(data.size(), &one, 1));  // past the end
    CHECK_FALSE(src->read(~0ull, &one, 1));        // overflowing offset
  }
}

TEST_CASE("a backward seek restarts decompression, a forward one does not") {
  std::string data = pattern(2'000'000);
  TempFile f(build_zip({{member("d.bin", data, true)}}));
  auto reader = Reader::open(f.path());
  std::string error;
  auto any = reader->open_member(0, error);
  auto* src = dynamic_cast<MemberSource*>(any.get());
  REQUIRE(src);
  char buf[4];
  REQUIRE(src->read(1'500'000, buf, 4));
  REQUIRE(src->read(1'900'000, buf, 4));
  CHECK(src->restarts() == 0);
  REQUIRE(src->read(100, buf, 4));
  CHECK(src->restarts() == 1);
  CHECK(std::string(buf, 4) == data.substr(100, 4));
}

TEST_CASE("corrupt or refused members give no source or failing reads") {
  TestMember bad = member("bad.bin", pattern(100000), true);
  bad.method = 8;
  TestMember enc = member("enc.bin", "x", false);
  enc.flags = 1;
  std::string bytes = build_zip({{bad, enc}});
  bytes[60] ^= 0x55;  // corrupt the deflate stream of the first member
  bytes[61] ^= 0x55;
  TempFile f(bytes);
  auto reader = Reader::open(f.path());
  std::string error;
  CHECK_FALSE(reader->open_member(1, error));
  CHECK(error.find("encrypted") != std::string::npos);
  auto src = reader->open_member(0, error);
  REQUIRE(src);
  std::string buf(100000, '\0');
  bool ok = src->read(0, buf.data(), buf.size());
  auto* ms = dynamic_cast<MemberSource*>(src.get());
  CHECK((!ok || buf != bad.data));
  if (!ok) CHECK_FALSE(ms->error().empty());
}
