// Reading one member of a remote wheel through range requests, against an
// in-memory zip and a counting fetcher; the PEP 691 page parser.
#include <catch2/catch.hpp>

#include "sagebuild/archive/zip_test_util.h"
#include "sagebuild/toolchain/remote_wheel.h"

using namespace sb::toolchain;

namespace {

struct FakeServer {
  std::string bytes;
  int calls = 0;
  bool ignores_ranges = false;
  RangeFetch fetch() {
    return [this](std::uint64_t off, std::uint64_t len) {
      ++calls;
      if (ignores_ranges) throw RangeNotSupported("HTTP 200");
      REQUIRE(off + len <= bytes.size());
      return bytes.substr(off, len);
    };
  }
};

std::string big_wheel() {
  std::vector<sb::zip::testing::TestMember> m;
  // Many members before and after, so the member and the directory are far apart.
  std::string filler(300 * 1024, 'x');
  m.push_back(sb::zip::testing::member("torch/lib/libtorch_cpu.so", filler, false));
  for (int i = 0; i < 2000; ++i)
    m.push_back(sb::zip::testing::member("torch/include/h" + std::to_string(i) + ".h", "#pragma once\n", true));
  m.push_back(sb::zip::testing::member("torch/version.py",
                                       "__version__ = '2.12.1+cu130'\ncuda: Optional[str] = '13.0'\n", true));
  m.push_back(sb::zip::testing::member("torch/lib/libc10.so", filler, false));
  return sb::zip::testing::build_zip(sb::zip::testing::TestZip(m));
}

}  // namespace

TEST_CASE("one member of a remote zip costs a few range requests, not the file") {
  FakeServer s{big_wheel()};
  RangeSource src(s.bytes.size(), s.fetch(), 64 * 1024);
  std::string vpy = read_zip_member(src, "torch/version.py");
  CHECK(vpy.find("cuda: Optional[str] = '13.0'") != std::string::npos);
  CHECK(s.calls <= 5);
  CHECK_THROWS_WITH(read_zip_member(src, "torch/nope.py"), Catch::Contains("no member torch/nope.py"));
  CHECK_THROWS_WITH(read_zip_member(src, "torch/lib/libc10.so", 1024), Catch::Contains("more than 1024"));
}

TEST_CASE("a server that ignores ranges is reported as such, a truncated file as broken") {
  FakeServer s{big_wheel()};
  s.ignores_ranges = true;
  RangeSource src(s.bytes.size(), s.fetch());
  CHECK_THROWS_AS(read_zip_member(src, "torch/version.py"), RangeNotSupported);
  FakeServer t{big_wheel().substr(0, 1000)};
  RangeSource src2(t.bytes.size(), t.fetch());
  CHECK_THROWS_WITH(read_zip_member(src2, "torch/version.py"), Catch::Contains("end record"));
}

TEST_CASE("PEP 691 project pages: files, sizes, relative URLs; the wheel for the row") {
  std::string page = R"({"meta": {"api-version": "1.1"}, "name": "torch", "files": [
    {"filename": "torch-2.12.1-cp314-cp314-manylinux_2_28_x86_64.whl", "url": "https://files.example/a/torch-2.12.1-cp314-cp314-manylinux_2_28_x86_64.whl", "size": 532272494},
    {"filename": "torch-2.12.1-cp313-cp313-manylinux_2_28_x86_64.whl", "url": "../../packages/torch-2.12.1-cp313.whl"},
    {"filename": "torch-2.12.1-cp314-cp314-macosx_14_0_arm64.whl", "url": "/p/mac.whl", "size": 1}]})";
  auto files = parse_simple_index_json(page, "https://index.example/simple/torch/");
  REQUIRE(files.size() == 3);
  CHECK(files[0].size == 532272494);
  CHECK(files[1].url == "https://index.example/simple/torch/../../packages/torch-2.12.1-cp313.whl");
  CHECK(files[2].url == "https://index.example/p/mac.whl");
  auto w = pick_wheel(files, "torch", "2.12.1", {"cp315", "cp314"}, {"manylinux_2_28_x86_64"});
  REQUIRE(w);
  CHECK(w->filename == "torch-2.12.1-cp314-cp314-manylinux_2_28_x86_64.whl");
  CHECK_FALSE(pick_wheel(files, "torch", "2.12.0", {"cp314"}, {"manylinux_2_28_x86_64"}));
  CHECK_THROWS_WITH(parse_simple_index_json("<html></html>", "https://x/simple/torch/"),
                    Catch::Contains("not a PEP 691"));
}
