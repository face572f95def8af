// The build cache: one directory shared by every build on the machine.
//
//   <root>/objects/<key>.o           torch-free kernel objects (object_key.h)
//   <root>/torch/<version>-<cuda>-<wheel sha>/   unpacked torch headers + libraries
//   <root>/cuda/<X.Y>/               a CUDA home assembled from NVIDIA's wheels (the host's platform)
//   <root>/work/<name>/              build.ninja and per-row outputs; one build at a
//                                    time, under a FileLock on "<root>/work/<name>.lock"
//
// Entries are filled once: under a FileLock (common/os.h) on "<entry>.lock", into a
// temporary directory beside the entry, renamed into place when complete.
// Several builds may share the cache at once.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "sagebuild/common/os.h"

namespace sb::toolchain {

using sb::FileLock;

// $XDG_CACHE_HOME/sagebuild, else %LOCALAPPDATA%\sagebuild (Windows), else
// $HOME/.cache/sagebuild.
std::filesystem::path default_cache_dir();

// Returns `entry` after making sure it exists: when absent, takes the lock,
// checks again (another build may have filled it meanwhile), calls
// fill(tmp_dir) on an empty temporary directory and renames it to `entry`.
// If fill throws, the temporary is removed and the error propagates.
std::filesystem::path fill_once(const std::filesystem::path& entry,
                                const std::function<void(const std::filesystem::path&)>& fill);

}  // namespace sb::toolchain
