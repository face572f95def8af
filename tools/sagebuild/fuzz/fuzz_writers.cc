// What the sdist and tool-wheel writers read (pep517/): the bytes choose a
// source tree — files with their names, sizes and modes, links into the tree,
// out of it, to directories, dangling ones, FIFOs — and the package's name and
// version; `sagebuild sdist` is written from it.  The rest of the input is
// also handed to the tool-wheel writer as the "executable" it packs (an ELF,
// a half-cut one, anything), which derives the platform tag from it, packs
// and verifies.  Invariants: a UsageError, ConfigError or IoError, or an
// archive under the output directory that holds no byte from outside the
// tree (a file planted outside is never shipped: the link rule, fs.h's
// tree_file()); nothing is written outside the output directory.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/fuzz/fuzz.h"
#include "sagebuild/pep517/sdist.h"
#include "sagebuild/pep517/tool_wheel.h"

namespace fs = std::filesystem;

namespace {

struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  unsigned next(unsigned bound) {
    if (n == 0 || bound == 0) return 0;
    --n;
    return *p++ % bound;
  }
  std::string take(std::size_t k) {
    k = std::min(k, n);
    std::string out(reinterpret_cast<const char*>(p), k);
    p += k;
    n -= k;
    return out;
  }
};

const char kSecret[] = "sb-fuzz-outside-secret-7d1e";

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A file of the fuzzed tree, where the bytes' names allow it; otherwise the
// entry is left out (the tree is what could be made; the harness never throws
// and never writes outside it):
//  - entry 1 named "f1" + "0" is a file that entry 10's "f10/ab" cannot be
//    made under;
//  - entry 1 named "f1" + "0" is a link "../../LICENSE" leading out of the
//    tree, and entry 10's "f10" would be written through it.
void write_entry(const fs::path& p, const std::string& text) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec || fs::symlink_status(p, ec).type() != fs::file_type::not_found) return;
  std::ofstream(p, std::ios::binary) << text;
}

// The archive inflated (zlib, in process), searched for the planted secret.
bool archive_holds_secret(const fs::path& archive) {
  std::ifstream in(archive, std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) sb::fuzz::broken("inflateInit2");
  z.next_in = reinterpret_cast<Bytef*>(gz.data());
  z.avail_in = static_cast<uInt>(gz.size());
  std::string tar;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    tar.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) sb::fuzz::broken("the sdist is not a complete gzip stream");
  return tar.find(kSecret) != std::string::npos;
}

std::string version_of(Bytes& b) {
  static const char* versions[] = {"2.2.0", "1.0", "v1.0", "1.0.0.post1", "01.2", "1.0+local", "not a version", ""};
  return versions[b.next(8)];
}

std::string name_of(Bytes& b) {
  static const char* names[] = {"sageattention", "Sage_Attention", "sage.attention", "sage--x", "-bad", "a b", "é"};
  return names[b.next(7)];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A tree file's bytes are a run of the input's, so an input that holds the
  // secret ships it from inside the tree (libFuzzer learns the string from the
  // search below): such an input proves nothing and is skipped.
  if (std::string_view(reinterpret_cast<const char*>(data), size).find(kSecret) != std::string_view::npos) return 0;
  static const fs::path base = fs::temp_directory_path() / ("sb-fuzz-writers-" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path tree = base / "tree", out = base / "out", outside = base / "outside";
  write(outside / "secret.txt", kSecret);
  Bytes b{data, size};
  // Each byte is read in its own statement: the operands of one expression
  // (a / b, a + b) are evaluated in an order the compiler chooses, and gcc's
  // replay build and clang's fuzz build chose differently, so an input meant
  // another tree in CTest than the one that failed.
  const std::string project = name_of(b);
  const std::string version = version_of(b);
  write(tree / "matrix/build-matrix.yaml",
        "pythons: [\"3.10\"]\nplatforms:\n  linux_x86_64: {runner: ubuntu-22.04, pypi_torch_has_cuda: true, "
        "torch_index: \"https://download.pytorch.org/whl/{cuda_tag}\"}\ncuda:\n  \"12.8\": {archs: [\"8.0\"]}\n"
        "torch:\n  \"2.8.0\":\n    pythons: [\"3.10\"]\n    variants:\n      - {cuda: \"12.8\", pypi: true}\n"
        "packages:\n  sageattention:\n    project: \"" +
            project + "\"\n    version: \"" + version +
            "\"\n    kernels: kernels/families.json\n    abi: abi3\n    naming: build-tag\n    archs: [\"8.0\"]\n"
            "profiles:\n  default:\n    torch: [\"2.8.0\"]\n");
  write(tree / "pyproject.toml", "[project]\n");
  write(tree / "LICENSE", "MIT\n");
  const char* dirs[] = {"kernels", "python", "matrix", "tools/sagebuild/pep517/backend"};
  for (const char* d : dirs) fs::create_directories(tree / d);
  unsigned entries = b.next(12);
  for (unsigned i = 0; i < entries; ++i) {
    const char* dir = dirs[b.next(4)];
    const std::string suffix = b.take(b.next(4));
    const fs::path at = tree / dir / ("f" + std::to_string(i) + suffix);
    std::error_code ec;
    switch (b.next(7)) {
      case 0:
      case 1:
        write_entry(at, b.take(b.next(64)));
        break;
      case 2:
        fs::create_symlink(outside / "secret.txt", at, ec);
        break;  // leaves the tree
      case 3:
        fs::create_symlink("../../LICENSE", at, ec);
        break;  // inside (or not)
      case 4:
        fs::create_symlink(tree / "kernels", at, ec);
        break;  // a directory
      case 5:
        fs::create_symlink(at.filename().string() + "x", at, ec);
        break;  // dangling
      case 6:
        fs::create_directories(at.parent_path(), ec);
        ::mkfifo(at.c_str(), 0644);
        break;
    }
    if (b.next(2)) fs::permissions(at, fs::perms::owner_exec, fs::perm_options::add, ec);
  }
  try {
    fs::path archive = sb::pep517::write_sdist(tree, out);
    if (archive.parent_path() != fs::absolute(out)) sb::fuzz::broken("the sdist was written outside --out");
    if (archive_holds_secret(archive)) sb::fuzz::broken("a file from outside the tree was shipped in the sdist");
  } catch (const sb::UsageError&) {
  } catch (const sb::ConfigError&) {
  } catch (const sb::IoError&) {
  }
  // The tool wheel of whatever the rest is.
  write(base / "exe" / "sagebuild", b.take(b.n));
  std::ostringstream log;
  try {
    sb::pep517::package_self(base / "exe" / "sagebuild", out, log);
  } catch (const sb::UsageError&) {
  } catch (const sb::IoError&) {
  }
  for (const auto& e : fs::directory_iterator(base)) {
    auto name = e.path().filename();
    if (name != "tree" && name != "out" && name != "outside" && name != "exe")
      sb::fuzz::broken(("something was written outside the output directory: " + e.path().string()).c_str());
  }
  fs::remove_all(base);
  return 0;
}
