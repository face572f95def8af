// A plan, written out: a table for people, JSON for tools, and the
// `strategy.matrix` JSON a GitHub Actions workflow fans out over.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sagebuild/matrix/matrix.h"

namespace sb::matrix {

// Every field of the row, as JSON.
nlohmann::json row_json(const Row& row);

// Aligned columns (id, python(s), torch, cuda, platform, archs, wheel) and a
// one-line summary; ends with a newline.
std::string format_table(const Plan& plan);

// {"profile": ..., "rows": [row_json...]}, indented; ends with a newline.
std::string format_json(const Plan& plan);

// {"include":[{"id","os","command","package","torch","cuda","python"}, ...]}
// on one line and without a trailing newline, so that
// `echo "matrix=$(sagebuild matrix --format github)" >> $GITHUB_OUTPUT` works.
std::string format_github(const Plan& plan);

}  // namespace sb::matrix
