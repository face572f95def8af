// `sagebuild sdist`: the source distribution of this repository's package
// (`python -m build --sdist` and pip reach it through the backend), from
// which the PEP 517 backend builds the wheel for the installing environment.
//
// `<project>-<version>.tar.gz` (the matrix's package built from our own
// tree: sageattention-2.2.0.tar.gz) holds, under `<project>-<version>/`:
// PKG-INFO, pyproject.toml, LICENSE, README.md, and every file of kernels/,
// python/, matrix/ and the backend's directory (pyproject's backend-path);
// caches (__pycache__, *.pyc), hidden files and built extensions
// (python/**/*.so, *.pyd) are left out.  None of sagebuild's C++ sources:
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

// Writes the sdist of the tree at `source_dir` into `out_dir`; returns its
// path.  Throws UsageError (not our tree, pyproject.toml or LICENSE
// missing), ConfigError (the matrix), IoError.
std::filesystem::path write_sdist(const std::filesystem::path& source_dir, const std::filesystem::path& out_dir);

}  // namespace sb::pep517
