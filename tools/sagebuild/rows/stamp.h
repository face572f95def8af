// A row's up-to-date stamp: what its wheel is made of, hashed, and written
// beside the row's work directory after a good build.  A later build whose
// stamp is equal and whose wheel in --out is the one stamped does nothing
// for the row.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sagebuild/distinfo/build_info.h"
#include "sagebuild/pack/wheel_writer.h"
#include "sagebuild/rows/summary.h"

namespace sb::rows {

// The payload's names and contents, the build-info, the licence and whether
// the smoke test runs: equal stamps mean an identical, equally checked wheel.
std::string row_stamp(const std::vector<pack::PayloadFile>& payload, const distinfo::BuildInfo& info,
                      const std::filesystem::path& license, bool smoke);

// True, with `res` filled as done, when `stamp_file` holds `stamp` and the
// SHA-256 of `wheel`, which still exists.
bool up_to_date(const std::filesystem::path& stamp_file, const std::filesystem::path& wheel, const std::string& stamp,
                RowResult& res);

// Writes the stamp of a finished row (atomically).
void write_stamp(const std::filesystem::path& stamp_file, const std::string& stamp, const std::string& wheel_sha256);

}  // namespace sb::rows
