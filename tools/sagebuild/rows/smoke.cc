#include "sagebuild/rows/smoke.h"

#include <algorithm>
#include <cstdlib>

#include "sagebuild/common/fs.h"

namespace sb::rows {

namespace fs = std::filesystem;

namespace {

std::string tail(const std::string& s, std::size_t n = 800) { return s.size() > n ? s.substr(s.size() - n) : s; }

// A venv's interpreter: bin/python on POSIX, Scripts\python.exe on Windows.
fs::path venv_python(const fs::path& venv) {
  fs::path windows = venv / "Scripts" / "python.exe";
  return fs::exists(windows) ? windows : venv / "bin" / "python";
}

// A Python string literal; names are identifiers and file names, but the
// quotes and backslashes are escaped all the same.
std::string py_str(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string py_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& i : items) out += py_str(i) + ", ";
  return out + "]";
}

std::vector<std::string> installed_files(const SmokeRequest& req) {
  std::vector<std::string> files = {req.package + "/__init__.py", req.package + "/build_info.json"};
  for (const auto& m : req.modules) files.push_back(m.archive_name);
  return files;
}

// Imports the package, then each module (importing ours registers its ops),
// and checks what each promises; prints the number of ops registered.
std::string import_script(const SmokeRequest& req) {
  std::string code = "import importlib, torch\nimportlib.import_module(" + py_str(req.package) + ")\nn = 0\n";
  for (const auto& m : req.modules) {
    code += "mod = importlib.import_module(" + py_str(m.module) + ")\n";
    code += "missing = [a for a in " + py_list(m.exports) + " if not hasattr(mod, a)]\n";
    code += "assert not missing, " + py_str(m.module + " lacks ") + " + ', '.join(missing)\n";
    if (!m.ops_namespace.empty()) {
      std::string ns = py_str(m.ops_namespace + "::");
      code += "ops = [o for o in torch._C._dispatch_get_all_op_names() if o.startswith(" + ns + ")]\n";
      code += "assert ops, 'no ' + " + ns + " + '* ops registered'\n";
      code += "assert hasattr(getattr(torch.ops, " + py_str(m.ops_namespace) + "), ops[0].split('::')[1])\n";
      code += "n += len(ops)\n";
    }
  }
  return code + "print(n)\n";
}

// Where a module links the driver and this machine has none, points the
// import at CUDA's stub as libcuda.so.1 (see SmokeRequest::cuda_stubs) and
// says so in `note`.  False (with the reason in `note`) when it cannot.
bool stub_driver_if_absent(run::ProcessRunner& runner, const SmokeRequest& req, const fs::path& py,
                           run::Command& import, std::string& note) {
  bool needs = std::any_of(req.modules.begin(), req.modules.end(), [](const SmokeModule& m) { return m.needs_driver; });
  if (!needs) return true;
  run::Result probe = runner.run(run::Command({py.string(), "-c", "import ctypes; ctypes.CDLL('libcuda.so.1')"}));
  if (probe.ok()) return true;
  if (req.cuda_stubs.empty() || !fs::exists(req.cuda_stubs / "libcuda.so")) {
    note =
        "import impossible here: a module links the CUDA driver (libcuda.so.1), which this machine lacks, and the "
        "toolkit has no stubs/libcuda.so to stand in for it";
    return false;
  }
  fs::path dir = req.scratch / "driver-stub";
  fs::create_directories(dir);
  std::error_code ec;
  fs::remove(dir / "libcuda.so.1", ec);
  fs::create_symlink(req.cuda_stubs / "libcuda.so", dir / "libcuda.so.1");
  const char* inherited = std::getenv("LD_LIBRARY_PATH");
  import.env["LD_LIBRARY_PATH"] = dir.string() + (inherited && *inherited ? ":" + std::string(inherited) : "");
  note = "; no CUDA driver here: libcuda.so.1 was CUDA's stub";
  return true;
}

}  // namespace

SmokeResult run_smoke(run::ProcessRunner& runner, const SmokeRequest& req) {
  SmokeResult res;
  fs::path venv = req.scratch / "venv";
  std::error_code ec;
  fs::remove_all(venv, ec);
  std::vector<std::string> mk = {req.python.executable.string(), "-m", "venv"};
  // The found Python's site-packages hold the row's torch: let the venv see them.
  if (req.torch_importable) mk.push_back("--system-site-packages");
  mk.push_back(venv.string());
  run::Result r = runner.run(run::Command(mk));
  if (!r.ok()) {
    res.message = "python -m venv failed: " + tail(r.err);
    return res;
  }
  fs::path py = venv_python(venv);
  if (req.torch_importable && req.python.torch) {
    // --system-site-packages shows the *base* interpreter's site-packages; when
    // the found Python is itself a venv (common: torch lives in one), torch
    // would stay invisible.  A .pth file names torch's directory explicitly,
    // in the site-packages the venv's own interpreter names.
    r = runner.run(run::Command({py.string(), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"}));
    if (!r.ok()) {
      res.message = "the venv's python does not answer: " + tail(r.err);
      return res;
    }
    fs::path site = r.out.substr(0, r.out.find_first_of("\r\n"));
    write_file_atomic(site / "_sagebuild_torch.pth", req.python.torch->dir.parent_path().string() + "\n");
  }
  run::Command install({py.string(), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", req.wheel.string()});
  install.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
  r = runner.run(install);
  if (!r.ok()) {
    res.message = "pip install --no-deps failed: " + tail(r.err + r.out);
    return res;
  }
  if (req.torch_importable) {
    run::Command import({py.string(), "-c", import_script(req)});
    std::string driver_note;
    if (!stub_driver_if_absent(runner, req, py, import, driver_note)) {
      res.message = driver_note;
      return res;
    }
    r = runner.run(import);
    if (!r.ok()) {
      res.message = "import failed: " + tail(r.err);
      return res;
    }
    res.ok = res.imported = true;
    res.message = "imported " + std::to_string(req.modules.size()) + " module(s)";
    std::string n = r.out.substr(0, r.out.find('\n'));
    if (n != "0") res.message += ", " + n + " ops registered";
    res.message += driver_note;
    return res;
  }
  // No torch here: check what pip installed instead of importing.
  std::string code =
      "import os, sysconfig\n"
      "d = sysconfig.get_paths()['platlib']\n"
      "for f in " +
      py_list(installed_files(req)) +
      ":\n"
      "    assert os.path.isfile(os.path.join(d, f)), 'not installed: ' + f\n";
  r = runner.run(run::Command({py.string(), "-c", code}));
  if (!r.ok()) {
    res.message = "installed files check failed: " + tail(r.err);
    return res;
  }
  res.ok = true;
  res.message = "installed; import skipped: torch " + req.torch_version + " not importable here";
  return res;
}

}  // namespace sb::rows
