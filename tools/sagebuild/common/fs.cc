#include "sagebuild/common/fs.h"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sagebuild/common/error.h"
#include "sagebuild/common/os.h"
#include "sagebuild/common/text.h"

#ifndef _WIN32
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

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

namespace {

std::string quoted(const fs::path& p) { return printable(p.string()); }

std::string kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

[[noreturn]] void refuse_input(const std::string& option, const fs::path& path, const std::string& what) {
  throw UsageError(option + " " + quoted(path) + ": " + what);
}

[[noreturn]] void refuse_kind(const std::string& option, const fs::path& path, fs::file_type t) {
  refuse_input(option, path, kind_of(t) + ", not a regular file; expected a file to read (not a pipe or a device)");
}

[[noreturn]] void refuse_size(const std::string& option, const fs::path& path, std::uintmax_t size,
                              std::uintmax_t max_bytes) {
  throw FileTooLarge(option + " " + quoted(path) + ": larger than " + std::to_string(max_bytes) +
                         " bytes, far more than such a file holds; expected a file of at most " +
                         std::to_string(max_bytes) + " bytes",
                     size);
}

[[noreturn]] void refuse_missing(const std::string& option, const fs::path& path, const std::error_code& ec) {
  if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory)
    refuse_input(option, path, "no such file; expected an existing file");
  refuse_input(option, path, "cannot open it for reading (" + ec.message() + ")");
}

}  // namespace

std::uintmax_t check_input_file(const fs::path& path, std::uintmax_t max_bytes, const std::string& option) {
  std::error_code ec;
  auto st = fs::status(path, ec);  // through links: what would be read
  if (ec || !fs::exists(st))
    refuse_missing(option, path, ec ? ec : std::make_error_code(std::errc::no_such_file_or_directory));
  if (!fs::is_regular_file(st)) refuse_kind(option, path, st.type());
  std::uintmax_t size = fs::file_size(path, ec);
  if (ec) refuse_missing(option, path, ec);
  if (size > max_bytes) refuse_size(option, path, size, max_bytes);
  return size;
}

#ifdef _WIN32
std::string read_file_capped(const fs::path& path, std::uintmax_t max_bytes, const std::string& option) {
  check_input_file(path, max_bytes, option);
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse_input(option, path, "cannot open it for reading");
  std::string out;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    out.append(buf, static_cast<std::size_t>(in.gcount()));
    if (out.size() > max_bytes) refuse_size(option, path, out.size(), max_bytes);
  }
  if (in.bad()) throw IoError("error reading " + quoted(path));
  return out;
}
#else
std::string read_file_capped(const fs::path& path, std::uintmax_t max_bytes, const std::string& option) {
  // Non-blocking: opening a FIFO for reading would otherwise wait for a
  // writer.  What is judged is what was opened (fstat), not a name that
  // may have changed since.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) refuse_missing(option, path, std::error_code(errno, std::generic_category()));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) refuse_missing(option, path, std::error_code(errno, std::generic_category()));
  if (!S_ISREG(st.st_mode)) {
    fs::file_type t = S_ISFIFO(st.st_mode)   ? fs::file_type::fifo
                      : S_ISCHR(st.st_mode)  ? fs::file_type::character
                      : S_ISBLK(st.st_mode)  ? fs::file_type::block
                      : S_ISDIR(st.st_mode)  ? fs::file_type::directory
                      : S_ISSOCK(st.st_mode) ? fs::file_type::socket
                                             : fs::file_type::unknown;
    refuse_kind(option, path, t);
  }
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    refuse_size(option, path, static_cast<std::uintmax_t>(st.st_size), max_bytes);
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError("error reading " + quoted(path) + ": " + std::strerror(errno));
    }
    if (got == 0) break;
    out.append(buf, static_cast<std::size_t>(got));
    if (out.size() > max_bytes) refuse_size(option, path, out.size(), max_bytes);  // it grew meanwhile
  }
  return out;
}
#endif

std::optional<fs::path> tree_file(const fs::path& root, const fs::path& path) {
  std::error_code ec;
  auto link = fs::symlink_status(path, ec);
  if (ec) throw IoError("cannot look at " + quoted(path) + ": " + ec.message());
  if (fs::is_regular_file(link)) return path;
  if (!fs::is_symlink(link)) return std::nullopt;
  const std::string target = fs::read_symlink(path, ec).string();
  auto refuse = [&](const std::string& why) -> std::optional<fs::path> {
    throw UsageError(quoted(path) + " is a symbolic link to " + printable(target) + ", which " + why +
                     "; a link in the source tree must point to a file inside it (" + quoted(root) +
                     "), which is then shipped as that file: replace the link by the file, or point it inside");
  };
  fs::path resolved = fs::canonical(path, ec);  // every link resolved; fails on a dangling link or a loop
  if (ec) return refuse("cannot be resolved (" + ec.message() + ")");
  fs::path top = fs::canonical(root, ec);
  if (ec) throw IoError("cannot resolve " + quoted(root) + ": " + ec.message());
  fs::path rel = resolved.lexically_relative(top);
  if (rel.empty() || *rel.begin() == "..") return refuse("leaves the tree (it resolves to " + quoted(resolved) + ")");
  auto st = fs::status(resolved, ec);
  if (ec || !fs::exists(st)) return refuse("cannot be resolved");
  if (fs::is_directory(st))
    return refuse("is a directory (a link to a directory is not followed: its files would ship twice)");
  if (!fs::is_regular_file(st)) return refuse("is " + kind_of(st.type()) + ", not a file");
  return resolved;
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
  if (ec) throw UsageError(option + " " + quoted(dir) + ": not a usable path (" + ec.message() + ")");
  // The nearest part of the path that exists must be a directory.
  for (fs::path p = abs; !p.empty(); p = p.parent_path()) {
    auto st = fs::status(p, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
      // A link loop (ELOOP), no permission: nothing can be created there.
      throw UsageError(option + " " + quoted(dir) + ": " + (p == abs ? std::string("it") : quoted(p)) +
                       " cannot be looked at (" + ec.message() +
                       "); expected a directory (created when missing): pass another path");
    }
    if (fs::exists(st)) {
      if (fs::is_directory(st)) return;
      throw UsageError(
          option + " " + quoted(dir) + ": " +
          (p == abs ? std::string("exists and is not a directory") : quoted(p) + " is a file, not a directory") +
          "; expected a directory (created when missing): pass another path or move the file away");
    }
    // Missing: a dangling link stands here when symlink_status finds one.
    if (fs::is_symlink(fs::symlink_status(p, ec)))
      throw UsageError(option + " " + quoted(dir) + ": " + quoted(p) +
                       " is a symbolic link to nothing; expected a directory (created when missing): pass "
                       "another path or remove the link");
    if (p == p.parent_path()) break;
  }
}

void check_no_line_break(const fs::path& path, const std::string& option) {
  if (path.string().find_first_of("\n\r") == std::string::npos) return;
  throw UsageError(option + " \"" + quoted(path) +
                   "\": the path holds a line break, which build.ninja cannot hold (ninja would read it as a line "
                   "continuation); expected a directory whose name has none");
}

void make_output_dir(const fs::path& dir, const std::string& option) {
  check_output_dir(dir, option);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw UsageError(option + " " + quoted(dir) + ": cannot create the directory (" + ec.message() +
                     "); expected a directory sagebuild may write to");
}

}  // namespace sb
