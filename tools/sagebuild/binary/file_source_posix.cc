// FileSource (byte_source.h) for POSIX hosts: pread.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/common/error.h"

namespace sb::binary {

std::unique_ptr<FileSource> FileSource::open(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open " + path.string() + " for reading: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError("cannot read " + path.string() + ": expected a regular file");
  }
  return std::unique_ptr<FileSource>(new FileSource(path, fd, static_cast<std::uint64_t>(st.st_size)));
}

FileSource::~FileSource() {
  if (handle_ >= 0) ::close(static_cast<int>(handle_));
}

bool FileSource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!in_bounds(offset, n, size_)) return false;
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t got = ::pread(static_cast<int>(handle_), out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;  // error, or the file shrank under us
    out += got;
    offset += static_cast<std::uint64_t>(got);
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace sb::binary
