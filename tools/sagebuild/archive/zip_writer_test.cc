#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <zlib.h>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/archive/zip_writer.h"
#include "sagebuild/binary/le.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"

using namespace sb::zip;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path =
        fs::temp_directory_path() / ("sb-writer-test-" + std::to_string(sb::process_id()) + "-" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string noise(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() % 16 + 'a');  // compressible, not trivial
  return s;
}

void write_sample(const fs::path& dest, std::int64_t mtime, const fs::path& disk_file) {
  Writer w(dest, WriterOptions{mtime});
  w.add_file("pkg/__init__.py", "", 0644);
  w.add_file("pkg/mod.py", "def f():\n    return 1\n", 0644);
  w.add_file("pkg/caf\xc3\xa9.txt", "unicode name", 0644);
  w.add_file("pkg-1.0.data/scripts/tool", "#!python\n", 0755);
  w.add_file_from_disk("pkg/blob.bin", disk_file, 0644);
  w.commit();
}

std::uint32_t crc_of(const std::string& s) {
  return static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

}  // namespace

TEST_CASE("DOS timestamps are computed in UTC and clamped to the DOS range") {
  DosDateTime epoch = to_dos_datetime(0);  // before 1980: clamped
  CHECK(epoch.date == ((0 << 9) | (1 << 5) | 1));
  CHECK(epoch.time == 0);
  DosDateTime t = to_dos_datetime(1700000000);  // 2023-11-14T22:13:20Z
  CHECK(t.date == (((2023 - 1980) << 9) | (11 << 5) | 14));
  CHECK(t.time == ((22 << 11) | (13 << 5) | (20 / 2)));
  DosDateTime leap = to_dos_datetime(951782400);  // 2000-02-29T00:00:00Z
  CHECK(leap.date == (((2000 - 1980) << 9) | (2 << 5) | 29));
  CHECK(to_dos_datetime(9'000'000'000).date == ((127 << 9) | (12 << 5) | 31));
}

TEST_CASE("the same inputs give byte-identical archives; another mtime does not") {
  TempDir dir;
  fs::path blob = dir.path / "blob.bin";
  sb::write_file_atomic(blob, noise(100000, 1));
  write_sample(dir.path / "a.whl", 1700000000, blob);
  write_sample(dir.path / "b.whl", 1700000000, blob);
  write_sample(dir.path / "c.whl", 1700000002, blob);
  std::string a = sb::read_file(dir.path / "a.whl");
  CHECK(a == sb::read_file(dir.path / "b.whl"));
  // Neither the machine's time zone nor the source file's own mtime leaks in.
  const char* old_tz = std::getenv("TZ");
  std::optional<std::string> saved = old_tz ? std::optional<std::string>(old_tz) : std::nullopt;
  sb::set_environment_variable("TZ", "Asia/Kolkata");
  fs::last_write_time(blob, fs::last_write_time(blob) - std::chrono::hours(30));
  write_sample(dir.path / "b.whl", 1700000000, blob);
  sb::set_environment_variable("TZ", saved);
  CHECK(a == sb::read_file(dir.path / "b.whl"));
  CHECK(a != sb::read_file(dir.path / "c.whl"));
  // Nothing but the three archives and the blob: no temporaries left over.
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 4);
}

TEST_CASE("our reader reads the archive back with no findings and exact fields") {
  TempDir dir;
  fs::path blob = dir.path / "blob.bin";
  std::string blob_data = noise(100000, 2);
  sb::write_file_atomic(blob, blob_data);
  fs::path dest = dir.path / "x.whl";
  write_sample(dest, 1700000000, blob);
  auto r = Reader::open(dest);
  REQUIRE(r->usable());
  CHECK(r->findings().empty());
  const auto& e = r->entries();
  REQUIRE(e.size() == 5);
  CHECK(e[0].name == "pkg/__init__.py");  // call order, not sorted
  CHECK(e[3].name == "pkg-1.0.data/scripts/tool");
  CHECK(e[3].unix_mode() == 0100755);
  CHECK(e[1].unix_mode() == 0100644);
  CHECK(e[2].flags & (1u << 11));  // UTF-8 flag on the non-ASCII name
  std::string bytes = sb::read_file(dest);
  for (const auto& m : e) {
    INFO(m.name);
    CHECK(m.made_by_os == 3);
    CHECK_FALSE(m.flags & (1u << 3));  // no data descriptor
    // No extra fields: data starts right after the local header's name.
    CHECK(m.data_offset == m.local_header_offset + 30 + m.name.size());
    CHECK(sb::binary::le16(reinterpret_cast<const std::uint8_t*>(bytes.data()) + m.local_header_offset + 28) == 0);
  }
  std::string got, err;
  REQUIRE(r->read_small(4, 1 << 20, got, err));
  CHECK(got == blob_data);
  CHECK(e[4].crc32 == crc_of(blob_data));
  CHECK(e[4].method == 8);
  CHECK(e[4].compressed_size < blob_data.size());
  REQUIRE(r->read_small(1, 1 << 20, got, err));
  CHECK(got == "def f():\n    return 1\n");
}

TEST_CASE("a 20 MB member streams through both writer and reader") {
  TempDir dir;
  fs::path blob = dir.path / "big.bin";
  std::string data = noise(20'000'000, 3);
  sb::write_file_atomic(blob, data);
  fs::path dest = dir.path / "big.whl";
  {
    Writer w(dest);
    w.add_file_from_disk("big.bin", blob, 0644);
    w.commit();
  }
  auto r = Reader::open(dest);
  REQUIRE(r->findings().empty());
  std::uint64_t seen = 0;
  uLong crc = crc32(0L, Z_NULL, 0);
  std::size_t largest_chunk = 0;
  ReadResult rr = r->read(0, [&](const std::uint8_t* d, std::size_t n) {
    seen += n;
    crc = crc32(crc, d, static_cast<uInt>(n));
    largest_chunk = std::max(largest_chunk, n);
    return true;
  });
  CHECK(rr.ok);
  CHECK(seen == data.size());
  CHECK(crc == crc_of(data));
  CHECK(largest_chunk <= 256 * 1024);  // streamed in bounded chunks
}

TEST_CASE("a writer destroyed without commit leaves nothing; bad input is refused") {
  TempDir dir;
  fs::path dest = dir.path / "never.whl";
  {
    Writer w(dest);
    w.add_file("a", "1", 0644);
    CHECK_THROWS_AS(w.add_file("a", "2", 0644), sb::UsageError);
    CHECK_THROWS_AS(w.add_file("b", "2", 0100644), sb::UsageError);
    CHECK_THROWS_AS(w.add_file_from_disk("c", dir.path / "missing", 0644), sb::IoError);
  }
  CHECK(fs::is_empty(dir.path));
}
