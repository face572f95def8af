// common/os.h for Windows hosts.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "sagebuild/common/error.h"
#include "sagebuild/common/os.h"

namespace sb {

namespace {

std::string last_error() {
  DWORD code = GetLastError();
  char* text = nullptr;
  FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                 code, 0, reinterpret_cast<char*>(&text), 0, nullptr);
  std::string s = text ? text : "error " + std::to_string(code);
  LocalFree(text);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::filesystem::path current_executable() {
  std::wstring buffer(MAX_PATH, L'\0');
  for (;;) {
    DWORD n = GetModuleFileNameW(nullptr, buffer.data(), static_cast<DWORD>(buffer.size()));
    if (n == 0) throw IoError("GetModuleFileNameW (this process's executable): " + last_error());
    if (n < buffer.size()) return std::filesystem::path(buffer.substr(0, n));
    buffer.resize(buffer.size() * 2);
  }
}

long process_id() { return static_cast<long>(GetCurrentProcessId()); }

std::optional<double> available_memory_gib() {
  MEMORYSTATUSEX m{};
  m.dwLength = sizeof m;
  if (!GlobalMemoryStatusEx(&m)) return std::nullopt;
  return static_cast<double>(m.ullAvailPhys) / (1024.0 * 1024.0 * 1024.0);
}

void set_environment_variable(const std::string& name, const std::optional<std::string>& value) {
  _putenv_s(name.c_str(), value ? value->c_str() : "");  // "" removes it
  _tzset();
}

FileLock::FileLock(const std::filesystem::path& lock_file, const std::function<void()>& on_wait) {
  std::error_code ec;
  std::filesystem::create_directories(lock_file.parent_path(), ec);
  // Shared read/write/delete access: other processes must be able to open
  // the file to wait for the lock, which is on its bytes, not on the handle.
  HANDLE h = CreateFileW(lock_file.c_str(), GENERIC_READ | GENERIC_WRITE,
                         FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) throw IoError("cannot open lock file " + lock_file.string() + ": " + last_error());
  OVERLAPPED whole{};
  if (LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD, MAXDWORD, &whole)) {
    handle_ = reinterpret_cast<std::intptr_t>(h);
    return;
  }
  if (GetLastError() == ERROR_LOCK_VIOLATION && on_wait) on_wait();
  whole = OVERLAPPED{};
  if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK, 0, MAXDWORD, MAXDWORD, &whole)) {
    std::string why = last_error();
    CloseHandle(h);
    throw IoError("cannot lock " + lock_file.string() + ": " + why);
  }
  handle_ = reinterpret_cast<std::intptr_t>(h);
}

FileLock::~FileLock() {
  if (handle_ == -1) return;
  HANDLE h = reinterpret_cast<HANDLE>(handle_);
  OVERLAPPED whole{};
  UnlockFileEx(h, 0, MAXDWORD, MAXDWORD, &whole);
  CloseHandle(h);
}

}  // namespace sb
