#include "sagebuild/rows/for_python.h"

#include <algorithm>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"

namespace sb::rows {

matrix::Row row_for_environment(const matrix::Matrix& m, const toolchain::PythonInfo& py, const std::string& platform) {
  const std::string who = "--for-python " + py.executable.string();
  if (!py.torch)
    throw UsageError(who +
                     ": no torch is importable there; install the CUDA build of torch you want the extension "
                     "for into that environment first (pip install torch), and build without pip's build "
                     "isolation (pip install --no-build-isolation .) so that the build sees it");
  const std::string version = py.torch->version.substr(0, py.torch->version.find('+'));  // for messages
  const std::optional<matrix::TorchVersion> release = py.torch->release();
  if (py.torch->cuda.empty())
    throw UsageError(who + ": torch " + py.torch->version +
                     " there is a CPU-only build; install a CUDA build of torch (e.g. pip install torch "
                     "--index-url https://download.pytorch.org/whl/cu130), then build again");
  std::vector<std::string> near;  // what the matrix builds of this torch release here
  for (const auto& r : m.rows) {
    if (r.source != matrix::kOurSource || r.platform != platform || r.torch != release) continue;
    if (r.cuda.release_str() != py.torch->cuda) {
      near.push_back("CUDA " + r.cuda.release_str());
      continue;
    }
    if (std::find(r.pythons.begin(), r.pythons.end(), py.release()) != r.pythons.end()) return r;
    near.push_back("Python " + r.requires_python);
  }
  std::sort(near.begin(), near.end());
  near.erase(std::unique(near.begin(), near.end()), near.end());
  std::string known;
  for (const auto& n : near) known += (known.empty() ? "" : ", ") + n;
  throw UsageError(who + ": " + m.path.string() + " builds no " + platform + " row for Python " + py.version() +
                   " with torch " + version + " for CUDA " + py.torch->cuda +
                   (known.empty() ? " (no row of torch " + version +
                                        " at all; `sagebuild matrix --profile sage2-all` "
                                        "lists the combinations)"
                                  : " (torch " + version + " rows here: " + known + ")") +
                   "; install a torch the matrix builds, or add the combination to the matrix");
}

std::vector<std::string> environment_archs(const char* list, const std::vector<std::string>& gpu_caps,
                                           std::string& origin) {
  std::vector<std::string> archs;
  if (list && *list) {
    origin = std::string("TORCH_CUDA_ARCH_LIST=\"") + list + "\"";
    std::string cur;
    for (char c : std::string(list) + ";") {
      if (c == ';' || c == ' ' || c == ',') {
        if (cur.size() > 4 && cur.compare(cur.size() - 4, 4, "+PTX") == 0) cur.resize(cur.size() - 4);
        if (!cur.empty()) archs.push_back(parse_arch_arg(cur, "TORCH_CUDA_ARCH_LIST").name());
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (archs.empty()) throw UsageError(origin + ": no arch in it; expected e.g. \"8.0;9.0\"");
    return archs;
  }
  for (const auto& cap : gpu_caps) archs.push_back(parse_arch_arg(cap, "nvidia-smi's compute_cap").name());
  if (!archs.empty()) origin = "the GPU(s) nvidia-smi reports";
  return archs;
}

std::vector<std::string> gpu_compute_caps(run::ProcessRunner& runner, const std::string& path_env) {
  auto smi = run::find_program("nvidia-smi", path_env);
  if (!smi) return {};
  run::Result r = runner.run(run::Command({smi->string(), "--query-gpu=compute_cap", "--format=csv,noheader"}));
  if (!r.ok()) return {};
  std::vector<std::string> caps;
  std::string line;
  for (char c : r.out + "\n") {
    if (c == '\n' || c == '\r') {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      if (!line.empty() && std::find(caps.begin(), caps.end(), line) == caps.end()) caps.push_back(line);
      line.clear();
    } else if (c != ' ' || !line.empty()) {
      line += c;
    }
  }
  return caps;
}

}  // namespace sb::rows
