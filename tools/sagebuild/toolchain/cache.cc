#include "sagebuild/toolchain/cache.h"

#include <cstdlib>

#include "sagebuild/common/error.h"

namespace sb::toolchain {

namespace fs = std::filesystem;

fs::path default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "sagebuild";
  // Windows keeps per-user caches under %LOCALAPPDATA%.
  if (const char* l = std::getenv("LOCALAPPDATA"); l && *l) return fs::path(l) / "sagebuild";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "sagebuild";
  throw UsageError("neither XDG_CACHE_HOME, LOCALAPPDATA nor HOME is set: pass --cache-dir DIR");
}

fs::path fill_once(const fs::path& entry, const std::function<void(const fs::path&)>& fill) {
  if (fs::exists(entry)) return entry;
  FileLock lock(entry.string() + ".lock");
  if (fs::exists(entry)) return entry;
  fs::path tmp = entry.parent_path() / ("." + entry.filename().string() + ".tmp-" + std::to_string(process_id()));
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

}  // namespace sb::toolchain
