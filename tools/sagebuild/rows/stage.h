// What goes into a row's wheel: the Python package, the linked extension and
// build_info.json (the record of what the wheel was built for and with).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sagebuild/distinfo/build_info.h"
#include "sagebuild/pack/wheel_writer.h"
#include "sagebuild/plan/kernel_manifest.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/summary.h"
#include "sagebuild/toolchain/gnu_resolver.h"

namespace sb::rows {

// The build-info record of a row as built.
distinfo::BuildInfo make_build_info(const matrix::Row& row, const toolchain::RowToolchain& tc,
                                    const plan::ExtensionSpec& extension, const std::string& source_revision);

// python/<package>/ without bytecode caches and without extension modules a
// developer build left there (the row's own extension is added instead).
std::vector<pack::PayloadFile> stage_payload(const std::filesystem::path& package_dir, const std::string& package,
                                             const std::filesystem::path& extension, const std::string& extension_name);

// The wheel's metadata for a row; the licence is read from <source_dir>/LICENSE.
pack::WheelSpec wheel_spec(const matrix::Row& row, distinfo::BuildInfo info, const std::filesystem::path& source_dir);

// The row as its wheel is tagged: a linux_<arch> row takes the manylinux tag
// its payload's ELF libraries earn (verify::derive_platform_tag, the rules
// verify judges the tag by), in its wheel's name too; `why` says which level
// and what rules out the one before.  Other platforms are unchanged.
matrix::Row with_platform_tag(const matrix::Row& row, const std::vector<pack::PayloadFile>& payload, std::string& why);

// Moves a finished wheel into `out_dir` (--out): a rename when on the same
// file system, else a copy under a temporary name and a rename.  Returns
// its new path.
std::filesystem::path move_wheel_into(const std::filesystem::path& wheel, const std::filesystem::path& out_dir);

// The steps every row ends with, on any platform:
// packs the row's wheel into dist_dir; UsageError when its file name is not
// the one the matrix predicts (row.wheel_filename).
std::filesystem::path pack_row_wheel(const matrix::Row& row, distinfo::BuildInfo info,
                                     const std::vector<pack::PayloadFile>& payload,
                                     const std::filesystem::path& source_dir, const std::filesystem::path& dist_dir);
// verifies the packed wheel, one line per finding in res.findings; UsageError
// naming the errors when it fails (warnings alone pass).
void verify_row_wheel(const std::filesystem::path& wheel, RowResult& res);
// moves the wheel into out_dir and records it in res (stage "done", ok).
void finish_row(const std::filesystem::path& wheel, const std::filesystem::path& out_dir, RowResult& res);

}  // namespace sb::rows
