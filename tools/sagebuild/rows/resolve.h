// 1. Each row's toolchain (toolchain/), found or provisioned by the resolver
// of the row's platform, and what its wheel is built from (this repository's
// kernel families or an upstream tree's extensions): the rows' inputs to the
// planner.  A row whose toolchain cannot be had fails here, by name.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "sagebuild/matrix/matrix.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/session.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/resolver.h"

namespace sb::rows {

// The launcher argv prefix for --launcher; throws UsageError for an unknown
// name or a launcher asked for by name that is not installed.
std::vector<std::string> resolve_launcher(const std::string& launcher, const std::string& path_env);

// The resolver of each platform's rows: this host's own, and for a dry run
// the MSVC one with placeholders for win_amd64 rows on another host.
class Resolvers {
 public:
  Resolvers(const Session& s, run::ProcessRunner& runner) : s_(s), runner_(runner) {}

  toolchain::RowResolver& for_row(const matrix::Row& row);
  // Runs ninja: the host resolver's runner (vcvars64's environment on Windows).
  run::ProcessRunner& build_runner() { return host_ ? host_->build_runner() : runner_; }

 private:
  const Session& s_;
  run::ProcessRunner& runner_;
  std::unique_ptr<toolchain::RowResolver> host_, windows_, cross_;
};

struct Resolved {
  std::vector<plan::RowInput> inputs;
  std::vector<std::size_t> row_of;  // inputs[k] is row row_of[k]
};

// 1. Each row's toolchain, found or provisioned, and its extension.
Resolved resolve_rows(Session& s, Resolvers& resolvers, std::ostream& out);

}  // namespace sb::rows
