#include "sagebuild/build/cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sagebuild/common/error.h"

namespace sb::build {

namespace fs = std::filesystem;

FileLock::FileLock(const fs::path& lock_file, const std::function<void()>& on_wait) {
  std::error_code ec;
  fs::create_directories(lock_file.parent_path(), ec);
  fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("cannot open lock file " + lock_file.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK && on_wait) on_wait();
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd_);
    throw IoError("cannot lock " + lock_file.string() + ": " + std::strerror(e));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

fs::path default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "sagebuild";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "sagebuild";
  throw UsageError("neither XDG_CACHE_HOME nor HOME is set: pass --cache-dir DIR");
}

fs::path fill_once(const fs::path& entry, const std::function<void(const fs::path&)>& fill) {
  if (fs::exists(entry)) return entry;
  FileLock lock(entry.string() + ".lock");
  if (fs::exists(entry)) return entry;
  fs::path tmp = entry.parent_path() /
                 ("." + entry.filename().string() + ".tmp-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp);
  try {
    fill(tmp);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::rename(tmp, entry, ec);
  if (ec) {
    fs::remove_all(tmp);
    throw IoError("cannot move " + tmp.string() + " to " + entry.string() + ": " + ec.message());
  }
  return entry;
}

}  // namespace sb::build
