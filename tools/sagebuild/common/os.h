// What sagebuild asks of the operating system beyond the C++ library: its
// process id, and an exclusive lock on a file.  One implementation per OS:
// os_posix.cc (flock) and os_win32.cc (LockFileEx).
#pragma once

#include <cstdint>
#include <filesystem>

namespace sb {

// This process's id: unique among the processes running now (temporary names).
long process_id();

// An exclusive lock on a file (created if needed), blocking until it is
// granted and held until destruction; the OS releases it when the process
// dies.  Throws IoError naming the file.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& lock_file);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::intptr_t handle_ = -1;  // a file descriptor, or a Windows HANDLE
};

}  // namespace sb
