#include "sagebuild/archive/tar_gz_writer.h"

#include <zlib.h>
#include <catch2/catch.hpp>

#include "sagebuild/common/error.h"

using namespace sb;

namespace {

std::string gunzip(const std::string& gz) {
  z_stream z{};
  REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(inflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

}  // namespace

TEST_CASE("tar.gz: ustar headers, data padded to blocks, two zero blocks, reproducible") {
  std::vector<tar::Member> members = {{"p-1.0/PKG-INFO", "Name: p\n", 0644}, {"p-1.0/run.sh", "#!/bin/sh\n", 0755}};
  std::string gz = tar::tar_gz(members, 1577836800);
  CHECK(gz == tar::tar_gz(members, 1577836800));
  CHECK(static_cast<unsigned char>(gz[9]) == 255);  // gzip OS byte
  std::string t = gunzip(gz);
  REQUIRE(t.size() == 512 * 6);
  CHECK(t.substr(0, 14) == "p-1.0/PKG-INFO");
  CHECK(t.substr(100, 7) == "0000644");
  CHECK(t.substr(124, 11) == "00000000010");  // 8 bytes
  CHECK(t.substr(136, 11) == "13602760400");  // 1577836800 in octal
  CHECK(t.substr(257, 6) == std::string("ustar\0", 6));
  CHECK(t.substr(512, 8) == "Name: p\n");
  CHECK(t.substr(1024 + 100, 7) == "0000755");
  unsigned sum = 0;
  for (int i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(t[i]);
  CHECK(std::stoul(t.substr(148, 6), nullptr, 8) == sum);
  CHECK(t.substr(2048) == std::string(1024, '\0'));
}

TEST_CASE("tar.gz: a long name goes into ustar's prefix; one that cannot is refused") {
  std::string dir(120, 'd'), file(90, 'f');
  std::string e = tar::ustar_entry({dir + "/" + file, "", 0644}, 0);
  CHECK(e.substr(0, 90) == file);
  CHECK(e.substr(345, 120) == dir);
  CHECK_THROWS_AS(tar::ustar_entry({std::string(200, 'x'), "", 0644}, 0), UsageError);
  CHECK_THROWS_AS(tar::ustar_entry({"/abs", "", 0644}, 0), UsageError);
}
