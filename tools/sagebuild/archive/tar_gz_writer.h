// A reproducible .tar.gz writer (POSIX ustar in a gzip stream, zlib): the
// same members in the same order give byte-identical archives on every run
// and machine.  Pinned: member order (the caller's), one mtime for every
// member and none in the gzip header, uid/gid 0 with empty owner names,
// modes as given, gzip's OS byte 255 ("unknown").  Written to a temporary
// name and renamed when complete.  For source distributions (pep517/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sb::tar {

struct Member {
  std::string name;  // "sageattention-2.2.0/kernels/src/x.cu": '/'-separated, relative
  std::string data;  // the bytes (when `file` is empty)
  std::uint32_t mode = 0644;
  // Streamed from this file instead of `data` by write_tar_gz(), 64 KiB at a
  // time: an sdist never holds a whole file in memory.  `size` is what the
  // caller found (fs.h's check_input_file); a file whose size changes while
  // it is read is an IoError, not a corrupt archive.  (`{}`: a braced
  // Member may leave it out without gcc's missing-initializer warning.)
  std::filesystem::path file{};
  std::uint64_t size = 0;
};

// One ustar header and the member's data, padded to 512-byte blocks.  Names
// longer than 100 bytes are split into ustar's prefix (<= 155) and name
// fields at a '/'; a name that cannot be split so throws UsageError.
std::string ustar_entry(const Member& member, std::int64_t mtime);

// The ustar header alone of a member of `size` bytes.
std::string ustar_header(const std::string& name, std::uint64_t size, std::uint32_t mode, std::int64_t mtime);

// The whole archive of in-memory members: every member, then the two zero
// blocks, gzip-compressed at level 9.  Throws UsageError (a bad name), IoError
// (zlib).
std::string tar_gz(const std::vector<Member>& members, std::int64_t mtime);

// The same archive written to `destination` atomically, streaming: members
// with a `file` are read from it in 64 KiB pieces and the compressed stream
// goes to disk as it is made, so memory stays small whatever the files' size.
void write_tar_gz(const std::filesystem::path& destination, const std::vector<Member>& members, std::int64_t mtime);

}  // namespace sb::tar
