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
                                    const plan::RowSpec& spec, const std::string& source_revision);

// An extension module as the wheel holds it: "sageattention/_fused.cpython-312-x86_64-linux-gnu.so".
struct StagedModule {
  std::string archive_name;
  std::filesystem::path file;  // the linked module
};
// Where a linked module goes in the wheel: its package's folder ("sageattention._C" ->
// "sageattention/<filename>"), or the top ("fp4attn_cuda" -> "<filename>").
StagedModule staged_module(const std::string& module, const std::string& filename, const std::filesystem::path& file);

// The Python package (<package_dir>, installed as <package>/) without
// bytecode caches and without extension modules a developer build left there
// (the row's own modules are added instead); with `globs`, only the files
// whose name matches one.  Links follow the one rule the sdist applies too
// (common/fs.h's tree_file(), docs/building.md): a link to a file inside
// `tree` (the checkout; empty: package_dir) is staged as that file, any other
// link is a UsageError naming it.
std::vector<pack::PayloadFile> stage_payload(const std::filesystem::path& package_dir, const std::string& package,
                                             const std::vector<std::string>& globs,
                                             const std::vector<StagedModule>& modules,
                                             const std::filesystem::path& tree = {});

// The wheel's metadata for a row, its summary and licence as the spec says
// (the licence file read from the checkout `tree`).
pack::WheelSpec wheel_spec(const matrix::Row& row, distinfo::BuildInfo info, const plan::RowSpec& spec,
                           const std::filesystem::path& tree);

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
                                     const std::vector<pack::PayloadFile>& payload, const plan::RowSpec& spec,
                                     const std::filesystem::path& tree, const std::filesystem::path& dist_dir);
// verifies the packed wheel, one line per finding in res.findings; UsageError
// naming the errors when it fails (warnings alone pass).
void verify_row_wheel(const std::filesystem::path& wheel, RowResult& res);
// moves the wheel into out_dir and records it in res (stage "done", ok).
void finish_row(const std::filesystem::path& wheel, const std::filesystem::path& out_dir, RowResult& res);

}  // namespace sb::rows
