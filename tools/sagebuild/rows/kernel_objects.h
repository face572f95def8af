// `sagebuild build --kernels-only --kernel-objects DIR`: each row's
// torch-free kernel objects compiled (or found in the cache) and put into
// DIR, each under its object key, with kernel-objects.json listing them
// (plan/kernel_objects.h), for the builds of the other rows of the same CUDA
// release, archs and platform to take (`--kernel-objects DIR`).
#pragma once

#include <iosfwd>

#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/resolve.h"
#include "sagebuild/rows/session.h"

namespace sb::rows {

// Compiles graph (planned kernels-only) with ninja, then copies each
// finished row's kernel objects into s.o.kernel_objects (a temporary name,
// renamed) and writes its manifest (likewise), adding to the one already
// there.  Records each row's outcome in s.results (stage "done", no wheel).
void build_kernel_objects(Session& s, const Resolved& r, const plan::CompileGraph& graph,
                          run::ProcessRunner& build_runner, std::ostream& out);

}  // namespace sb::rows
