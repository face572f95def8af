#include "sagebuild/binary/byte_source.h"

#include <cerrno>
#include <cstring>

#ifdef _WIN32
#include <cstdio>
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "sagebuild/common/error.h"

namespace sb::binary {

bool MemorySource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!in_bounds(offset, n, bytes_.size())) return false;
  if (n) std::memcpy(dst, bytes_.data() + offset, n);
  return true;
}

#ifdef _WIN32

std::unique_ptr<FileSource> FileSource::open(const std::filesystem::path& path) {
  std::FILE* f = _wfopen(path.c_str(), L"rb");
  if (!f) throw IoError("cannot open " + path.string() + " for reading");
  if (_fseeki64(f, 0, SEEK_END) != 0) {
    std::fclose(f);
    throw IoError("cannot determine the size of " + path.string());
  }
  auto size = static_cast<std::uint64_t>(_ftelli64(f));
  return std::unique_ptr<FileSource>(new FileSource(path, -1, f, size));
}

FileSource::~FileSource() {
  if (file_) std::fclose(file_);
}

bool FileSource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!in_bounds(offset, n, size_)) return false;
  if (_fseeki64(file_, static_cast<long long>(offset), SEEK_SET) != 0) return false;
  return std::fread(dst, 1, n, file_) == n;
}

#else

std::unique_ptr<FileSource> FileSource::open(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open " + path.string() + " for reading: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError("cannot read " + path.string() + ": expected a regular file");
  }
  return std::unique_ptr<FileSource>(
      new FileSource(path, fd, nullptr, static_cast<std::uint64_t>(st.st_size)));
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileSource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!in_bounds(offset, n, size_)) return false;
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t got = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;  // error, or the file shrank under us
    out += got;
    offset += static_cast<std::uint64_t>(got);
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

#endif

}  // namespace sb::binary
