#include <catch2/catch.hpp>

#include <filesystem>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"

using namespace sb::binary;

TEST_CASE("in_bounds rejects ranges past the end, including overflowing ones") {
  CHECK(in_bounds(0, 10, 10));
  CHECK(in_bounds(10, 0, 10));
  CHECK_FALSE(in_bounds(5, 6, 10));
  CHECK_FALSE(in_bounds(11, 0, 10));
  CHECK_FALSE(in_bounds(~0ull, 2, 10));
  CHECK_FALSE(in_bounds(2, ~0ull, 10));
}

TEST_CASE("memory and file sources read exact ranges and refuse the rest") {
  auto path = std::filesystem::temp_directory_path() / ("sb-bytesource-" + std::to_string(sb::process_id()));
  sb::write_file_atomic(path, "0123456789");
  MemorySource mem("0123456789");
  auto file = FileSource::open(path);
  for (ByteSource* s : {static_cast<ByteSource*>(&mem), static_cast<ByteSource*>(file.get())}) {
    CHECK(s->size() == 10);
    char buf[4] = {};
    REQUIRE(s->read(3, buf, 4));
    CHECK(std::string(buf, 4) == "3456");
    CHECK_FALSE(s->read(8, buf, 4));
    CHECK(s->read(10, buf, 0));
  }
  file.reset();  // Windows removes no open file
  std::filesystem::remove(path);
  CHECK_THROWS_AS(FileSource::open(path), sb::IoError);
  CHECK_THROWS_AS(FileSource::open(std::filesystem::temp_directory_path()), sb::IoError);
}
