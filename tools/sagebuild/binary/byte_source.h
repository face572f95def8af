// Random access to bytes, wherever they live: a memory buffer, a file, or (in
// archive/) a member of a zip.  The binary readers (ELF, PE, fatbin) only see
// this interface, so they read from a wheel member without extracting it and
// their tests build inputs in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace sb::binary {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::uint64_t size() const = 0;
  // Reads exactly n bytes at offset.  Returns false (and reads nothing
  // useful) when [offset, offset+n) is not inside the source or I/O fails.
  virtual bool read(std::uint64_t offset, void* dst, std::size_t n) = 0;
};

// True when [offset, offset+n) lies inside [0, size), without overflow.
constexpr bool in_bounds(std::uint64_t offset, std::uint64_t n, std::uint64_t size) {
  return offset <= size && n <= size - offset;
}

// Owns its bytes (tests, small members read whole).
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string bytes) : bytes_(std::move(bytes)) {}
  std::uint64_t size() const override { return bytes_.size(); }
  bool read(std::uint64_t offset, void* dst, std::size_t n) override;
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// A file kept open for positioned reads, never mapped: pread on POSIX
// (file_source_posix.cc), ReadFile at an offset on Windows
// (file_source_win32.cc).
class FileSource final : public ByteSource {
 public:
  // Throws IoError naming the path when it cannot be opened or sized.
  static std::unique_ptr<FileSource> open(const std::filesystem::path& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  std::uint64_t size() const override { return size_; }
  bool read(std::uint64_t offset, void* dst, std::size_t n) override;
  const std::filesystem::path& path() const { return path_; }

 private:
  FileSource(std::filesystem::path path, std::intptr_t handle, std::uint64_t size)
      : path_(std::move(path)), handle_(handle), size_(size) {}
  std::filesystem::path path_;
  std::intptr_t handle_ = -1;  // a file descriptor, or a Windows HANDLE
  std::uint64_t size_ = 0;
};

}  // namespace sb::binary
