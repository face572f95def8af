// 2. The compile graph of every resolved row (plan/: one graph for every
// toolchain, the objects already in the cache left out), and 3a. what a dry
// run prints instead of building: each command the build would run, and what
// this host lacks that a real build needs.
#pragma once

#include <iosfwd>

#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/resolve.h"
#include "sagebuild/rows/session.h"

namespace sb::rows {

// 2. The compile graph of every resolved row.
plan::CompileGraph plan_rows(Session& s, const Resolved& r, std::ostream& out);

// 3a. A dry run: the commands a build would run, and what follows them.
int print_plan(const Session& s, const Resolved& r, const plan::CompileGraph& g, std::ostream& out);

}  // namespace sb::rows
