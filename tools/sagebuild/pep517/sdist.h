// `sagebuild sdist`: the source distribution of this repository's package
// (`python -m build --sdist` and pip reach it through the backend), from
// which the PEP 517 backend builds the wheel for the installing environment.
//
// `<name>-<version>.tar.gz` (PEP 625: the matrix's package built from our
// own tree, its name normalized with '_', its version normalized:
// sageattention-2.2.0.tar.gz) holds, under `<name>-<version>/`:
// PKG-INFO, pyproject.toml, LICENSE, README.md, and every file of kernels/,
// python/, matrix/ and the backend's directory (pyproject's backend-path);
// caches (__pycache__, *.pyc), hidden files and built extensions
// (python/**/*.so, *.pyd) are left out.  Links follow the one rule both
// writers apply (fs.h's tree_file(), docs/building.md): a link to a file in
// the tree ships as that file, any other link is refused.  Files are streamed
// into the archive; one over 16 MiB, or a tree over 64 MiB or 20,000 files,
// is refused before anything is read.  None of sagebuild's C++ sources:
// the build runs an installed sagebuild.  Reproducible (tar_gz_writer.h,
// SOURCE_DATE_EPOCH), written atomically.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sb::pep517 {

// The directories and files of the tree an sdist holds (relative paths).
inline const std::vector<std::string> kSdistDirs = {"kernels", "matrix", "python", "tools/sagebuild/pep517/backend"};
inline const std::vector<std::string> kSdistFiles = {"pyproject.toml", "LICENSE", "README.md"};

// PEP 625's "<name>-<version>" for the project and version: "sageattention-2.2.0".
// Throws UsageError when they cannot name an sdist.
std::string sdist_base_name(const std::string& project, const std::string& version);

// Writes the sdist of the tree at `source_dir` into `out_dir`; returns its
// path.  Throws UsageError (not our tree, pyproject.toml or LICENSE
// missing), ConfigError (the matrix), IoError.
std::filesystem::path write_sdist(const std::filesystem::path& source_dir, const std::filesystem::path& out_dir);

}  // namespace sb::pep517
