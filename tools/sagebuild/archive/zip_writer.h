// A reproducible zip writer (on libzip): the same inputs and options give
// byte-identical archives on every run and machine.  Everything that could
// vary is pinned: entry order (the caller's), timestamps (one fixed time, in
// UTC), permissions, compression level, no extra fields, no data
// descriptors, no comment.  The archive appears under its final name only on
// commit().
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace sb::zip {

// 1980-01-01T00:00:00Z, the earliest time a DOS timestamp can hold.
constexpr std::int64_t kDosEpoch = 315532800;

struct WriterOptions {
  // Seconds since the Unix epoch, UTC (the caller derives it from
  // SOURCE_DATE_EPOCH or a fixed default).  Clamped to the DOS range
  // [1980-01-01, 2107-12-31]; DOS time has 2-second resolution.
  std::int64_t mtime = kDosEpoch;
  int deflate_level = 6;  // 1..9; output depends on zlib's version as well
};

// DOS date and time fields (APPNOTE 4.4.6) for a UTC time, after clamping.
struct DosDateTime {
  std::uint16_t date = 0, time = 0;
};
DosDateTime to_dos_datetime(std::int64_t unix_seconds);

class Writer {
 public:
  // Throws IoError when the temporary file beside `destination` cannot be created.
  explicit Writer(std::filesystem::path destination, WriterOptions options = {});
  ~Writer();  // without commit(): nothing is left behind
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Members are written in call order.  `mode` is the permission bits
  // (0644 or 0755); the entry is a regular file.  Throws UsageError for a
  // mode outside 0777 or a duplicate name, IoError for libzip failures.
  void add_file(std::string name, std::string_view data, std::uint32_t mode);
  // Streams `src` at commit() (never loaded whole).
  void add_file_from_disk(std::string name, const std::filesystem::path& src, std::uint32_t mode);
  // Writes the archive and renames it over the destination.  Throws IoError.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sb::zip
