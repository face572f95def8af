// common/os.h for POSIX hosts.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

#include "sagebuild/common/error.h"
#include "sagebuild/common/os.h"

namespace sb {

std::filesystem::path current_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw IoError("cannot read /proc/self/exe (this process's executable): " + ec.message());
  return p;
}

long process_id() { return static_cast<long>(::getpid()); }

std::optional<double> available_memory_gib() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return static_cast<double>(kib) / (1024.0 * 1024.0);
  return std::nullopt;
}

void set_environment_variable(const std::string& name, const std::optional<std::string>& value) {
  if (value)
    ::setenv(name.c_str(), value->c_str(), 1);
  else
    ::unsetenv(name.c_str());
  ::tzset();
}

FileLock::FileLock(const std::filesystem::path& lock_file, const std::function<void()>& on_wait) {
  std::error_code ec;
  std::filesystem::create_directories(lock_file.parent_path(), ec);
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot open lock file " + lock_file.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    handle_ = fd;
    return;
  }
  if (errno == EWOULDBLOCK && on_wait) on_wait();
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd);
    throw IoError("cannot lock " + lock_file.string() + ": " + std::strerror(e));
  }
  handle_ = fd;
}

FileLock::~FileLock() {
  if (handle_ >= 0) ::close(static_cast<int>(handle_));  // closing releases the flock
}

}  // namespace sb
