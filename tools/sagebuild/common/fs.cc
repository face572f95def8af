#include "sagebuild/common/fs.h"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sagebuild/common/error.h"
#include "sagebuild/common/os.h"

namespace sb {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open " + path.string() + " for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw IoError("error reading " + path.string());
  return ss.str();
}

std::string read_file_capped(const fs::path& path, std::uintmax_t max_bytes, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(option + " " + path.string() + ": cannot open it for reading");
  std::string out;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    out.append(buf, static_cast<std::size_t>(in.gcount()));
    if (out.size() > max_bytes)
      throw UsageError(option + " " + path.string() + ": larger than " + std::to_string(max_bytes) +
                       " bytes, far more than such a file holds; expected the file sagebuild wrote");
  }
  if (in.bad()) throw IoError("error reading " + path.string());
  return out;
}

static std::atomic<unsigned> g_counter{0};

AtomicOutput::AtomicOutput(fs::path destination) : dest_(std::move(destination)) {
  fs::path dir = dest_.parent_path();
  if (dir.empty()) dir = ".";
  temp_ = dir / ("." + dest_.filename().string() + ".tmp-" + std::to_string(process_id()) + "-" +
                 std::to_string(g_counter++));
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) {
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void AtomicOutput::commit() {
  std::error_code ec;
  fs::rename(temp_, dest_, ec);
  if (ec) throw IoError("cannot rename " + temp_.string() + " to " + dest_.string() + ": " + ec.message());
  committed_ = true;
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  AtomicOutput out(path);
  {
    std::ofstream f(out.temp_path(), std::ios::binary | std::ios::trunc);
    if (!f) throw IoError("cannot create " + out.temp_path().string());
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.flush();
    if (!f) throw IoError("error writing " + out.temp_path().string());
  }
  out.commit();
}

void check_output_dir(const fs::path& dir, const std::string& option) {
  if (dir.empty())
    throw UsageError(option + ": expected a directory to write to, got an empty name; pass one, e.g. " + option +
                     " dist");
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  if (ec) throw UsageError(option + " " + dir.string() + ": not a usable path (" + ec.message() + ")");
  // The nearest part of the path that exists must be a directory.
  for (fs::path p = abs; !p.empty(); p = p.parent_path()) {
    auto st = fs::status(p, ec);
    if (fs::exists(st)) {
      if (fs::is_directory(st)) return;
      throw UsageError(
          option + " " + dir.string() + ": " +
          (p == abs ? std::string("exists and is not a directory") : p.string() + " is a file, not a directory") +
          "; expected a directory (created when missing): pass another path or move the file away");
    }
    if (p == p.parent_path()) break;
  }
}

}  // namespace sb
