#include "sagebuild/pep517/sdist.h"

#include <algorithm>

#include "sagebuild/archive/tar_gz_writer.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/text.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/pack/wheel_writer.h"
#include "sagebuild/wheel/names.h"
#include "sagebuild/wheel/pep440.h"

namespace sb::pep517 {

namespace fs = std::filesystem;

namespace {

// Far above this tree's (49 files, the largest 31 KB), far below what takes
// seconds to compress: a 2 GiB file is refused before it is opened.
constexpr std::uintmax_t kMaxFileBytes = 16ull << 20, kMaxTotalBytes = 64ull << 20;
constexpr std::size_t kMaxFiles = 20'000;

bool left_out(const fs::path& rel) {
  for (const auto& part : rel)
    if (part.string().front() == '.' || part == "__pycache__") return true;
  std::string ext = rel.extension().string();
  return ext == ".pyc" || ext == ".so" || ext == ".pyd";
}

struct Collected {
  std::vector<std::pair<fs::path, fs::path>> files;  // relative name, the file to read
  std::uintmax_t bytes = 0;
};

// One file of the tree (the link rule: fs.h's tree_file), its size checked
// before anything is read.
void collect(const fs::path& root, const fs::path& rel, Collected& c) {
  auto file = tree_file(root, root / rel);
  if (!file) return;
  if (c.files.size() == kMaxFiles)
    throw UsageError("sdist: more than " + std::to_string(kMaxFiles) + " files under " + printable(root.string()) +
                     "; expected a source tree (is --source-dir the checkout?)");
  c.bytes += check_input_file(*file, kMaxFileBytes, "sdist: the source file");
  if (c.bytes > kMaxTotalBytes)
    throw UsageError("sdist: the files under " + printable(root.string()) + " add up to more than " +
                     std::to_string(kMaxTotalBytes) + " bytes; expected a source tree (this one is about 1 MB)");
  c.files.emplace_back(rel, *file);
}

tar::Member member_of(const fs::path& rel, const fs::path& file, const std::string& prefix) {
  std::error_code ec;
  auto perms = fs::status(file, ec).permissions();
  bool exec = !ec && (perms & fs::perms::owner_exec) != fs::perms::none;
  tar::Member m{prefix + rel.generic_string(), {}, exec ? 0755u : 0644u};
  m.file = file;
  m.size = check_input_file(file, kMaxFileBytes, "sdist: the source file");
  return m;
}

}  // namespace

std::string sdist_base_name(const std::string& project, const std::string& version) {
  // PEP 625: the normalized name with '_' for '-', the normalized version.
  std::string name = wheel::canonicalize_name(project);
  std::replace(name.begin(), name.end(), '-', '_');
  std::string why;
  auto v = wheel::parse_version(version, &why);
  if (!wheel::is_valid_project_name(project) || !v)
    throw UsageError("sdist: the package '" + printable(project) + "' version '" + printable(version) +
                     "' cannot name an sdist (PEP 625 needs a valid project name and a PEP 440 version" +
                     (why.empty() ? "" : ": " + printable(why)) + ")");
  return name + "-" + v->str();
}

fs::path write_sdist(const fs::path& source_dir, const fs::path& out_dir) {
  check_output_dir(out_dir, "--out");  // before any work
  const fs::path root = fs::absolute(source_dir);
  matrix::Matrix m = matrix::load_matrix(root / "matrix/build-matrix.yaml");
  auto pkg = std::find_if(m.packages.begin(), m.packages.end(),
                          [](const matrix::Package& p) { return p.source == matrix::kOurSource; });
  if (pkg == m.packages.end())
    throw UsageError(
        printable((root / "matrix/build-matrix.yaml").string()) +
        ": no package is built from this repository's own tree (source: ours); nothing to put in an sdist");
  for (const auto& f : {"pyproject.toml", "LICENSE"}) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(root / f, ec)))
      throw UsageError("sdist: " + printable((root / f).string()) +
                       " is missing; an sdist needs it (run from the checkout)");
  }

  const std::string base = sdist_base_name(pkg->project, pkg->version);
  const std::string prefix = base + "/";
  std::vector<tar::Member> members;
  members.push_back({prefix + "PKG-INFO",
                     "Metadata-Version: 2.2\nName: " + pkg->project + "\nVersion: " + pkg->version +
                         "\nLicense: MIT\n"
                         // Each wheel's own: its torch's Pythons, its torch requirement,
                         // a summary naming the torch and CUDA it was built for.
                         "Dynamic: Summary\nDynamic: Requires-Python\nDynamic: Requires-Dist\n",
                     0644});
  Collected c;
  for (const auto& f : kSdistFiles) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(root / f, ec))) collect(root, f, c);
  }
  for (const auto& d : kSdistDirs) {
    if (!fs::is_directory(root / d)) throw UsageError("sdist: " + printable((root / d).string()) + " is missing");
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root / d, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      fs::path rel = it->path().lexically_relative(root);
      // Never through a link (a loop would throw here): links go to tree_file().
      std::error_code kind;
      bool dir = !it->is_symlink(kind) && it->is_directory(kind);
      if (left_out(rel)) {
        if (dir) it.disable_recursion_pending();
        continue;
      }
      if (dir) continue;  // walked
      collect(root, rel, c);
    }
    if (ec) throw IoError("sdist: cannot list " + printable((root / d).string()) + ": " + ec.message());
  }
  std::sort(c.files.begin(), c.files.end(),
            [](const auto& a, const auto& b) { return a.first.generic_string() < b.first.generic_string(); });
  for (const auto& [rel, file] : c.files) members.push_back(member_of(rel, file, prefix));

  make_output_dir(out_dir, "--out");
  fs::path out = fs::absolute(out_dir) / (base + ".tar.gz");
  tar::write_tar_gz(out, members, pack::timestamp_from_environment());
  return out;
}

}  // namespace sb::pep517
