// FileSource (byte_source.h) for Windows hosts: ReadFile with the offset in
// an OVERLAPPED on a synchronous handle, Windows' positioned read.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/common/error.h"

namespace sb::binary {

std::unique_ptr<FileSource> FileSource::open(const std::filesystem::path& path) {
  HANDLE h = CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE)
    throw IoError("cannot open " + path.string() + " for reading (Windows error " + std::to_string(GetLastError()) +
                  ")");
  LARGE_INTEGER size{};
  BY_HANDLE_FILE_INFORMATION info{};
  if (GetFileType(h) != FILE_TYPE_DISK || !GetFileInformationByHandle(h, &info) ||
      (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) || !GetFileSizeEx(h, &size)) {
    CloseHandle(h);
    throw IoError("cannot read " + path.string() + ": expected a regular file");
  }
  return std::unique_ptr<FileSource>(
      new FileSource(path, reinterpret_cast<std::intptr_t>(h), static_cast<std::uint64_t>(size.QuadPart)));
}

FileSource::~FileSource() {
  if (handle_ != -1) CloseHandle(reinterpret_cast<HANDLE>(handle_));
}

bool FileSource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!in_bounds(offset, n, size_)) return false;
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    OVERLAPPED at{};
    at.Offset = static_cast<DWORD>(offset);
    at.OffsetHigh = static_cast<DWORD>(offset >> 32);
    DWORD want = n > (1u << 30) ? (1u << 30) : static_cast<DWORD>(n);
    DWORD got = 0;
    if (!ReadFile(reinterpret_cast<HANDLE>(handle_), out, want, &got, &at) || got == 0) return false;
    out += got;
    offset += got;
    n -= got;
  }
  return true;
}

}  // namespace sb::binary
