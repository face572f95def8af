#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "sagebuild/archive/member_source.h"
#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/archive/zip_test_util.h"
#include "sagebuild/binary/elf.h"

using namespace sb::zip;
using namespace sb::zip::testing;

namespace {

std::string pattern(std::size_t n) {
  std::mt19937 rng(7);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>('a' + rng() % 8);
  return s;
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

TEST_CASE("a backward seek restarts decompression unless it lands in the kept head") {
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
  REQUIRE(src->read(100, buf, 4));  // the first MiB is kept
  CHECK(src->restarts() == 0);
  CHECK(std::string(buf, 4) == data.substr(100, 4));
  REQUIRE(src->read(1'048'574, buf, 4));  // straddles the head's end
  CHECK(src->restarts() == 1);
  CHECK(std::string(buf, 4) == data.substr(1'048'574, 4));
  REQUIRE(src->read(1'500'000, buf, 4));
  CHECK(src->restarts() == 1);
  REQUIRE(src->read(1'100'000, buf, 4));
  CHECK(src->restarts() == 2);
  CHECK(std::string(buf, 4) == data.substr(1'100'000, 4));
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

TEST_CASE("the ELF reader sees the same library through a deflated member as in memory") {
  std::string exe;
  {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    if (!in) {
      WARN("skipped: /proc/self/exe unreadable");
      return;
    }
    exe.assign(std::istreambuf_iterator<char>(in), {});
  }
  TempFile f(build_zip({{member("pkg/_C.so", exe, true)}}));
  auto reader = Reader::open(f.path());
  std::string error;
  auto src = reader->open_member(0, error);
  REQUIRE(src);
  sb::Findings f1, f2;
  auto zipped = sb::binary::ElfFile::parse(*src, f1);
  sb::binary::MemorySource mem(exe);
  auto direct = sb::binary::ElfFile::parse(mem, f2);
  REQUIRE(zipped);
  REQUIRE(direct);
  CHECK(f1.size() == f2.size());
  CHECK(zipped->info().needed == direct->info().needed);
  CHECK(zipped->info().sections.size() == direct->info().sections.size());
  CHECK(zipped->info().dynamic_symbols.size() == direct->info().dynamic_symbols.size());
  CHECK(zipped->exported_symbols() == direct->exported_symbols());
  auto* ms = dynamic_cast<MemberSource*>(src.get());
  INFO("restarts: " << ms->restarts());
  CHECK(ms->restarts() <= 4);
}

TEST_CASE("a backward seek resumes from the nearest checkpoint, not the start") {
  std::string data = pattern(16 << 20);
  TempFile f(build_zip({{member("d.bin", data, true)}}));
  auto reader = Reader::open(f.path());
  std::string error;
  auto any = reader->open_member(0, error);
  auto* src = dynamic_cast<MemberSource*>(any.get());
  REQUIRE(src);
  char buf[8];
  REQUIRE(src->read((15 << 20) + 5, buf, 8));  // checkpoints every MiB on the way
  std::uint64_t before = src->inflated();
  REQUIRE(src->read((8 << 20) + (1 << 19), buf, 8));  // 8.5 MiB: back to the 8 MiB checkpoint
  CHECK(std::string(buf, 8) == data.substr((8 << 20) + (1 << 19), 8));
  CHECK(src->restarts() == 1);
  CHECK(src->inflated() - before <= (1 << 20));
}

TEST_CASE("reads at alternating ends stop at the decompression budget, in bounded time") {
  std::string data = pattern(4 << 20);
  TempFile f(build_zip({{member("d.bin", data, true)}}));
  auto reader = Reader::open(f.path());
  std::string error;
  auto any = reader->open_member(0, error);
  auto* src = dynamic_cast<MemberSource*>(any.get());
  REQUIRE(src);
  CHECK(src->budget() == MemberSource::kBudgetFactor * data.size() + MemberSource::kBudgetSlack);
  char buf[8];
  bool failed = false;
  for (int i = 0; i < 100'000 && !failed; ++i)
    failed = !src->read(i % 2 ? (1 << 20) + (3 << 18) : (4 << 20) - 100, buf, 8);
  CHECK(failed);
  CHECK(src->error().find("needs more than") != std::string::npos);
  CHECK(src->inflated() <= src->budget() + (256 << 10));
}
