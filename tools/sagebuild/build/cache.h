// The build cache: one directory shared by every build on the machine.
//
//   <root>/objects/<key>.o           torch-free kernel objects (object_key.h)
//   <root>/torch/<version>-<cuda>-<wheel sha>/   unpacked torch headers + libraries
//   <root>/cuda/<X.Y>/               a CUDA home assembled from NVIDIA's wheels
//   <root>/work/<name>/              build.ninja and per-row outputs; one build at a
//                                    time, under an flock on "<root>/work/<name>.lock"
//
// Entries are filled once: under an flock on "<entry>.lock", into a
// temporary directory beside the entry, renamed into place when complete.
// Several builds may share the cache at once.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace sb::build {

// Exclusive advisory lock on a file (created if needed), released on destruction.
class FileLock {
 public:
  // Blocks until the lock is ours; throws IoError.  When another process
  // holds it, calls `on_wait` once before blocking (to say whom we wait for).
  explicit FileLock(const std::filesystem::path& lock_file, const std::function<void()>& on_wait = {});
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

// $XDG_CACHE_HOME/sagebuild, else $HOME/.cache/sagebuild.
std::filesystem::path default_cache_dir();

// Returns `entry` after making sure it exists: when absent, takes the lock,
// checks again (another build may have filled it meanwhile), calls
// fill(tmp_dir) on an empty temporary directory and renames it to `entry`.
// If fill throws, the temporary is removed and the error propagates.
std::filesystem::path fill_once(const std::filesystem::path& entry,
                                const std::function<void(const std::filesystem::path&)>& fill);

}  // namespace sb::build
