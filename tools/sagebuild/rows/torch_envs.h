// --provision-torch: each row's torch with its dependencies in a private venv
// in the cache, the smoke test's Python.
#pragma once

#include <filesystem>
#include <future>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/session.h"
#include "sagebuild/run/process.h"
#include "sagebuild/toolchain/python_env.h"

namespace sb::rows {

// --provision-torch: each row's environment (toolchain/torch_env.h), made in
// the background from the moment the rows are planned; the smoke test waits
// for its row's.
class TorchEnvs {
 public:
  TorchEnvs(const Session& s, run::ProcessRunner& runner) : s_(s), runner_(runner) {}
  void start(const plan::RowInput& in, std::ostream& out);
  std::optional<toolchain::PythonInfo> python_of(const std::string& row_id);

 private:
  const Session& s_;
  run::ProcessRunner& runner_;
  std::map<std::filesystem::path, std::shared_future<std::filesystem::path>> by_entry_;
  std::map<std::string, std::shared_future<std::filesystem::path>> by_row_;
};

}  // namespace sb::rows
