// File-system helpers shared by every writer: nothing is left half-written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace sb {

// Reads a whole (small) file; throws IoError naming the path.
std::string read_file(const std::filesystem::path& path);

// Reads a file an operator names (--previous, --policy-dir) that must be
// small: never more than `max_bytes` + 1 bytes are read, and a larger file is
// a UsageError naming `option`, the file and the bound, before anything is
// parsed.
std::string read_file_capped(const std::filesystem::path& path, std::uintmax_t max_bytes, const std::string& option);

// An output that appears under its final name only when complete.
// Writes go to "<dir>/.<name>.tmp-<pid>-<n>" beside the destination, and
// commit() renames it over the destination (atomic on POSIX and NTFS).
// Destroyed without commit(), the temporary is removed.
class AtomicOutput {
 public:
  explicit AtomicOutput(std::filesystem::path destination);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::filesystem::path& temp_path() const { return temp_; }
  const std::filesystem::path& destination() const { return dest_; }
  void commit();  // throws IoError

 private:
  std::filesystem::path dest_;
  std::filesystem::path temp_;
  bool committed_ = false;
};

// An output directory named by `option` ("--out") that a command will create
// or fill: throws UsageError, before any work, when the name is empty, names
// something that is not a directory, or lies under a file.
void check_output_dir(const std::filesystem::path& dir, const std::string& option);

// Writes `content` to `path` atomically (via AtomicOutput).
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace sb
