// `sagebuild package-self`: sagebuild as a Python wheel, the way maturin ships
// itself: `sagebuild-<version>-py3-none-<platform>.whl` holding
//   sagebuild-<version>.data/scripts/sagebuild[.exe]  this executable: pip
//       installs it into the environment's bin/ (Scripts\) directory, on PATH
//       in an activated venv, mode 0755;
//   sagebuild/__init__.py  the PEP 517 backend (backend/sagebuild/, compiled
//       in: the executable needs no source tree to package itself).
// Written by pack's wheel writer, tagged with the platform verify derives
// from the executable (a static Linux build earns the oldest manylinux level;
// one linked against shared libraries outside the policy earns none and is
// refused before anything is written: its wheel would install only on
// machines like the build's), then verified: a wheel that fails its own
// verify is removed and the command fails.
#pragma once

#include <filesystem>
#include <iosfwd>

namespace sb::pep517 {

// sagebuild's version, as `sagebuild --version` prints it: "0.1.0".
const char* tool_version();

// Writes the tool wheel of `executable` into `out_dir`; returns its path.
// Throws UsageError (it fails verify: the findings are in the message),
// IoError.
std::filesystem::path package_self(const std::filesystem::path& executable, const std::filesystem::path& out_dir,
                                   std::ostream& log);

}  // namespace sb::pep517
