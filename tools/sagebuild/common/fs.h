// File-system helpers shared by every writer: nothing is left half-written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sagebuild/common/error.h"

namespace sb {

// Reads a whole (small) file; throws IoError naming the path.
std::string read_file(const std::filesystem::path& path);

// The one way to read a file an operator names (--previous, --matrix,
// --policy-dir, an sdist's top-level files): it must be a regular file (a
// FIFO, a device such as /dev/zero, a directory or a socket is refused before
// anything is read: on POSIX the file is opened non-blocking and judged by
// fstat, so a FIFO cannot hang the open), its size is checked against
// `max_bytes` before reading, and never more than `max_bytes` + 1 bytes are
// read (a file that grows meanwhile).  Every refusal is a UsageError naming
// `option` and the file, saying what was expected.
std::string read_file_capped(const std::filesystem::path& path, std::uintmax_t max_bytes, const std::string& option);

// The refusal of a file over its cap (a UsageError), with the size found, for
// callers that word it their own way (the matrix: at file:1:1).
class FileTooLarge : public UsageError {
 public:
  FileTooLarge(const std::string& message, std::uintmax_t size) : UsageError(message), size_(size) {}
  std::uintmax_t size() const { return size_; }

 private:
  std::uintmax_t size_;
};

// The same checks without reading: throws as read_file_capped() would, and
// returns the file's size.  For inputs that are then streamed (the sdist's
// files, tar_gz_writer.h).
std::uintmax_t check_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes, const std::string& option);

// What a path found while walking a source tree is, under the one rule for
// links both writers (the wheel's staging, rows/stage.cc, and the sdist,
// pep517/sdist.cc) apply (docs/building.md, "Links in the source tree"):
//  - a regular file is shipped;
//  - a symbolic link whose target, every link in it resolved, is a regular
//    file inside `root` is shipped as that file's bytes, under the link's own
//    name (a wheel and an sdist hold no links);
//  - a link that leaves `root`, dangles or loops is refused: UsageError
//    naming the link and its target, whatever it points to.  A file from
//    outside the tree never ships;
//  - anything else (a directory, a FIFO, a socket, a device, a link to one)
//    is not a file to ship: nullopt (directories are walked, the rest skipped).
// Returns the file whose bytes to read (the link's resolved target).
std::optional<std::filesystem::path> tree_file(const std::filesystem::path& root, const std::filesystem::path& path);

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
// something that is not a directory, lies under a file, or cannot be looked
// at (a symbolic link loop, a dangling link, no permission).  The one check
// every --out goes through (build, index, package-self, sdist).
void check_output_dir(const std::filesystem::path& dir, const std::string& option);

// A path option that ends up in generated files read line by line
// (build.ninja, depfiles): a line break in it is a UsageError naming the
// option, before any work.
void check_no_line_break(const std::filesystem::path& path, const std::string& option);

// check_output_dir(), then creates the directory (and its parents); a failure
// to create it is a UsageError naming the option, never a filesystem_error.
void make_output_dir(const std::filesystem::path& dir, const std::string& option);

// Writes `content` to `path` atomically (via AtomicOutput).
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace sb
