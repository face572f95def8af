#include "sagebuild/rows/torch_envs.h"

#include <ostream>

#include "sagebuild/toolchain/torch_env.h"

namespace sb::rows {

namespace fs = std::filesystem;

void TorchEnvs::start(const plan::RowInput& in, std::ostream& out) {
  const matrix::Row& row = in.row;
  toolchain::PythonInfo base =
      toolchain::query_python_cached(runner_, toolchain::torch_env_base(s_.o.toolchain, row), s_.o.cache_dir);
  fs::path entry = toolchain::torch_env_entry(s_.o.cache_dir, row, base);
  auto it = by_entry_.find(entry);
  if (it == by_entry_.end()) {
    auto wheel = toolchain::cached_torch_wheel(s_.o.cache_dir, row, base);
    out << "[" << row.id << "] torch " << row.torch.str() << " with its dependencies into " << entry.string()
        << (wheel ? " (from " + wheel->filename().string() + ")" : std::string()) << ", while compiling\n";
    auto opt = s_.o.toolchain;
    auto& runner = runner_;
    it = by_entry_
             .emplace(entry, std::async(std::launch::async,
                                        [&runner, opt, base, row, wheel] {
                                          return toolchain::provision_torch_env(runner, opt, base, row, wheel);
                                        })
                                 .share())
             .first;
  }
  by_row_.emplace(row.id, it->second);
}
std::optional<toolchain::PythonInfo> TorchEnvs::python_of(const std::string& row_id) {
  auto it = by_row_.find(row_id);
  if (it == by_row_.end()) return std::nullopt;
  return toolchain::query_python(runner_, it->second.get());  // rethrows the install's UsageError
}

}  // namespace sb::rows
