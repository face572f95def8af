// Profiles: checking what a profile pins against the facts, and selecting
// its rows.
#pragma once

#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/matrix/yaml_reader.h"

namespace sb::matrix {

// A profile as written, with where each pinned value sits, for messages.
struct ProfileSource {
  Located name;
  std::vector<Located> packages, torch, cuda, pythons, platforms, archs, rows;
};

// Fails (at the offending value) when the profile pins a combination that
// cannot exist: a CUDA none of its torch releases ships for, a Python they
// have no wheels for, an arch its CUDA or packages cannot build, an unknown
// row id; or when it selects no row. Needs m.rows.
void check_profile(const Matrix& m, const Profile& profile, const ProfileSource& source);

// The profile's rows, in plan order.
std::vector<Row> select_rows(const Matrix& m, const Profile& profile);

}  // namespace sb::matrix
