// What sagebuild asks of the operating system beyond the C++ library: its
// executable, its process id, its environment, and an exclusive lock on a file.  One implementation per OS:
// os_posix.cc (flock) and os_win32.cc (LockFileEx).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace sb {

// Sets (value) or removes (nullopt) an environment variable of this process,
// and makes the C library re-read TZ (tests change the time zone).
void set_environment_variable(const std::string& name, const std::optional<std::string>& value);

// The file this process was started from (/proc/self/exe; GetModuleFileNameW),
// absolute.  Throws IoError when the OS does not say.
std::filesystem::path current_executable();

// This process's id: unique among the processes running now (temporary names).
long process_id();

// The memory the system could give processes now without swapping, in GiB
// (/proc/meminfo's MemAvailable; GlobalMemoryStatusEx's ullAvailPhys), or
// nullopt when the OS does not say.
std::optional<double> available_memory_gib();

// An exclusive lock on a file (created if needed), blocking until it is
// granted and held until destruction; the OS releases it when the process
// dies.  Throws IoError naming the file.  When another holder has it, calls
// `on_wait` once before blocking (to say whom we wait for).
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& lock_file, const std::function<void()>& on_wait = {});
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::intptr_t handle_ = -1;  // a file descriptor, or a Windows HANDLE
};

}  // namespace sb
