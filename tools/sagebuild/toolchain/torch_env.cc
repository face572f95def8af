#include "sagebuild/toolchain/torch_env.h"

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/toolchain/provision.h"

namespace sb::toolchain {

namespace fs = std::filesystem;

namespace {

std::string tail_of(const std::string& s, std::size_t n = 800) { return s.size() > n ? s.substr(s.size() - n) : s; }

// What the marker says: the torch requirement and where from.
std::string marker_text(const matrix::Row& row, const std::string& index) {
  return "torch==" + row.torch.str() + " (" + row.cuda_tag + ") from " + index + "\n";
}

}  // namespace

fs::path torch_env_entry(const fs::path& cache_dir, const matrix::Row& row, const PythonInfo& base) {
  return cache_dir / "torch-env" / (row.torch.str() + "-" + row.cuda_tag + "-py" + base.version());
}

fs::path torch_env_python(const fs::path& entry) {
  fs::path windows = entry / "Scripts" / "python.exe";
  return fs::exists(windows) ? windows : entry / "bin" / "python";
}

fs::path torch_env_base(const ToolchainOptions& opt, const matrix::Row& row) {
  if (opt.python) return *opt.python;
  // A per-interpreter wheel installs only into its own Python.
  std::vector<std::string> names = row.abi_mode == wheel::AbiMode::per_interpreter
                                       ? std::vector<std::string>{"python" + row.build_python.str()}
                                       : std::vector<std::string>{"python3", "python"};
  for (const auto& n : names)
    if (auto p = run::find_program(n, opt.path_env)) return *p;
  throw UsageError("--provision-torch: row " + row.id + " needs " + names.front() +
                   " on PATH to make torch's environment from; install it or pass --python PATH");
}

std::optional<fs::path> cached_torch_wheel(const fs::path& cache_dir, const matrix::Row& row, const PythonInfo& base) {
  fs::path dir = cache_dir / "downloads" / ("torch-" + row.torch.str() + "-" + row.cuda_tag);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  const std::string tag = "-cp" + std::to_string(base.major) + std::to_string(base.minor) + "-";
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".whl" && name.find(tag) != std::string::npos) return e.path();
  }
  return std::nullopt;
}

fs::path provision_torch_env(ProcessRunner& runner, const ToolchainOptions& opt, const PythonInfo& base,
                             const matrix::Row& row, const std::optional<fs::path>& wheel) {
  const fs::path entry = torch_env_entry(opt.cache_dir, row, base);
  const std::string index = torch_index_for(opt, row);
  const fs::path marker = entry / ".complete";
  auto complete = [&] {
    std::error_code ec;
    return fs::exists(marker, ec) && read_file(marker) == marker_text(row, index) &&
           fs::exists(torch_env_python(entry), ec);
  };
  if (complete()) return torch_env_python(entry);
  fs::create_directories(entry.parent_path());
  FileLock lock(entry.string() + ".lock");
  if (complete()) return torch_env_python(entry);  // another build made it meanwhile
  std::error_code ec;
  fs::remove_all(entry, ec);  // an interrupted one: made again from scratch
  const std::string what =
      "--provision-torch: torch " + row.torch.str() + " (" + row.cuda_tag + ") into " + entry.string();
  Result r = runner.run(Command({base.executable.string(), "-m", "venv", entry.string()}));
  if (!r.ok())
    throw UsageError(
        what + ": " + base.executable.string() + " -m venv failed: " + tail_of(r.err) +
        "\n  fix: install the venv module (Debian: python3-venv) or pass --python with a Python that has it");
  std::vector<std::string> argv = {torch_env_python(entry).string(),
                                   "-m",
                                   "pip",
                                   "install",
                                   "--disable-pip-version-check",
                                   "--progress-bar",
                                   "off",
                                   "--index-url",
                                   index};
  argv.push_back(wheel ? wheel->string() : "torch==" + row.torch.str());
  Command install(argv);
  install.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
  r = runner.run(install);
  if (!r.ok())
    throw UsageError(what + ": pip install failed (exit " + std::to_string(r.exit_code) +
                     "): " + tail_of(r.out + r.err) + "\n  fix: make " + index +
                     " reachable (--torch-index URL), or pass --python with a Python that has torch " +
                     row.torch.str());
  write_file_atomic(marker, marker_text(row, index));
  return torch_env_python(entry);
}

}  // namespace sb::toolchain
