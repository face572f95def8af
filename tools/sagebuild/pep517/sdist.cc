#include "sagebuild/pep517/sdist.h"

#include <algorithm>

#include "sagebuild/archive/tar_gz_writer.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/pack/wheel_writer.h"

namespace sb::pep517 {

namespace fs = std::filesystem;

namespace {

bool left_out(const fs::path& rel) {
  for (const auto& part : rel)
    if (part.string().front() == '.' || part == "__pycache__") return true;
  std::string ext = rel.extension().string();
  return ext == ".pyc" || ext == ".so" || ext == ".pyd";
}

tar::Member member_of(const fs::path& root, const fs::path& rel, const std::string& prefix) {
  fs::path file = root / rel;
  auto perms = fs::status(file).permissions();
  bool exec = (perms & fs::perms::owner_exec) != fs::perms::none;
  return {prefix + rel.generic_string(), read_file(file), exec ? 0755u : 0644u};
}

}  // namespace

fs::path write_sdist(const fs::path& source_dir, const fs::path& out_dir) {
  const fs::path root = fs::absolute(source_dir);
  matrix::Matrix m = matrix::load_matrix(root / "matrix/build-matrix.yaml");
  auto pkg = std::find_if(m.packages.begin(), m.packages.end(),
                          [](const matrix::Package& p) { return p.source == matrix::kOurSource; });
  if (pkg == m.packages.end())
    throw UsageError(
        (root / "matrix/build-matrix.yaml").string() +
        ": no package is built from this repository's own tree (source: ours); nothing to put in an sdist");
  for (const auto& f : {"pyproject.toml", "LICENSE"})
    if (!fs::is_regular_file(root / f))
      throw UsageError("sdist: " + (root / f).string() + " is missing; an sdist needs it (run from the checkout)");

  std::string base = pkg->project + "-" + pkg->version;
  std::replace(base.begin(), base.end(), ' ', '_');
  const std::string prefix = base + "/";
  std::vector<tar::Member> members;
  members.push_back({prefix + "PKG-INFO",
                     "Metadata-Version: 2.2\nName: " + pkg->project + "\nVersion: " + pkg->version +
                         "\nLicense: MIT\n"
                         // Each wheel's own: its torch's Pythons, its torch requirement,
                         // a summary naming the torch and CUDA it was built for.
                         "Dynamic: Summary\nDynamic: Requires-Python\nDynamic: Requires-Dist\n",
                     0644});
  std::vector<fs::path> files;
  for (const auto& f : kSdistFiles)
    if (fs::is_regular_file(root / f)) files.emplace_back(f);
  for (const auto& d : kSdistDirs) {
    if (!fs::is_directory(root / d)) throw UsageError("sdist: " + (root / d).string() + " is missing");
    for (const auto& e : fs::recursive_directory_iterator(root / d)) {
      fs::path rel = fs::relative(e.path(), root);
      if (e.is_regular_file() && !e.is_symlink() && !left_out(rel)) files.push_back(rel);
    }
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.generic_string() < b.generic_string(); });
  for (const auto& rel : files) members.push_back(member_of(root, rel, prefix));

  fs::create_directories(out_dir);
  fs::path out = fs::absolute(out_dir) / (base + ".tar.gz");
  tar::write_tar_gz(out, members, pack::timestamp_from_environment());
  return out;
}

}  // namespace sb::pep517
