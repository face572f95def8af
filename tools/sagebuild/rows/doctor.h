// `sagebuild doctor`: what each row's build needs, checked on this host
// without building: ninja, the compiler launcher, the cache, and each row's
// toolchain as its resolver sees it.  (`doctor --preprocess`: preflight.h.)
#pragma once

#include <iosfwd>

#include "sagebuild/rows/build.h"
#include "sagebuild/run/process.h"

namespace sb::rows {

// `sagebuild doctor`: one line per check for each row: ✓ present, ↓ a build
// downloads it, ✗ missing (with its fix); returns 1 when it printed any ✗
// line, else 0.
int run_doctor(BuildOptions options, run::ProcessRunner& runner, std::ostream& out);

}  // namespace sb::rows
