#include "sagebuild/toolchain/windows_python.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_path.h"
#include "sagebuild/toolchain/python_env.h"
#include "sagebuild/toolchain/torch.h"

namespace sb::toolchain {

std::string_view windows_python_query_script() {
  return R"PY(
import importlib.util, json, os, sys, sysconfig
def libs_in(d):
    return sorted(f for f in os.listdir(d) if f.lower().endswith(".lib")) if os.path.isdir(d) else []
info = {"executable": sys.executable, "version": [sys.version_info[0], sys.version_info[1]],
        "include": sysconfig.get_paths().get("include", ""),
        "libs_dir": os.path.join(sys.base_prefix, "libs")}
info["has_python_h"] = os.path.isfile(os.path.join(info["include"], "Python.h"))
info["libs"] = libs_in(info["libs_dir"])
spec = importlib.util.find_spec("torch")
if spec is not None and spec.submodule_search_locations:
    root = list(spec.submodule_search_locations)[0]
    version_py = os.path.join(root, "version.py")
    torch = {"root": root, "lib_dir": os.path.join(root, "lib"),
             "version_py": open(version_py, encoding="utf-8").read() if os.path.isfile(version_py) else ""}
    torch["libs"] = libs_in(torch["lib_dir"])
    torch["include_dirs"] = [d for d in (os.path.join(root, "include"),
                                         os.path.join(root, "include", "torch", "csrc", "api", "include"))
                             if os.path.isdir(d)]
    info["torch"] = torch
print(json.dumps(info))
)PY";
}

namespace {

bool has_lib(const std::vector<std::string>& libs, const std::string& name) {
  return std::any_of(libs.begin(), libs.end(), [&](const std::string& l) { return run::win_iequals(l, name); });
}

}  // namespace

WindowsPythonFacts parse_windows_python_query(std::string_view output, const std::string& python) {
  try {
    auto j = nlohmann::json::parse(last_line(output));
    WindowsPythonFacts f;
    f.executable = j.at("executable").get<std::string>();
    f.major = j.at("version").at(0).get<int>();
    f.minor = j.at("version").at(1).get<int>();
    f.include_dir = j.at("include").get<std::string>();
    f.has_python_h = j.at("has_python_h").get<bool>();
    f.libs_dir = j.at("libs_dir").get<std::string>();
    f.libs = j.at("libs").get<std::vector<std::string>>();
    if (j.contains("torch")) {
      const auto& t = j["torch"];
      WindowsTorchFacts tf;
      tf.root = t.at("root").get<std::string>();
      tf.lib_dir = t.at("lib_dir").get<std::string>();
      tf.libs = t.at("libs").get<std::vector<std::string>>();
      tf.include_dirs = t.at("include_dirs").get<std::vector<std::string>>();
      std::string version_py = t.at("version_py").get<std::string>();
      tf.version = parse_version_py(version_py, "__version__").value_or("");
      tf.cuda = parse_version_py(version_py, "cuda").value_or("");
      f.torch = std::move(tf);
    }
    return f;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(python + " gave an unexpected answer to the Windows interpreter query (" + e.what() +
                     "); expected one JSON object on the last line, got: " + std::string(output.substr(0, 300)));
  }
}

WindowsPythonFacts query_windows_python(ProcessRunner& runner, const std::string& python) {
  Result r = runner.run(Command{{python, "-c", std::string(windows_python_query_script())}});
  if (!r.spawned)
    throw UsageError("cannot run the build Python " + python + ": " + r.err +
                     " (pass --python C:\\path\\to\\python.exe, the interpreter the row's torch is installed in)");
  if (r.exit_code != 0)
    throw UsageError(python + " failed the Windows interpreter query (exit " + std::to_string(r.exit_code) +
                     "): " + r.err.substr(0, 2000));
  return parse_windows_python_query(r.out, python);
}

void check_windows_python(const WindowsPythonFacts& f, const sb::matrix::Row& row,
                          const std::vector<std::string>& torch_libs) {
  std::vector<std::string> problems;
  const std::string py = f.executable.empty() ? "the build Python" : f.executable;
  if (!f.has_python_h)
    problems.push_back(py + ": no Python.h in " + f.include_dir +
                       " (install Python from python.org or actions/setup-python, which ship the headers)");
  bool abi3 = row.abi_mode == sb::matrix::AbiMode::abi3;
  if (!abi3 && f.release() != row.build_python)
    problems.push_back(py + " is Python " + f.version() + "; row " + row.id + " builds for Python " +
                       row.build_python.str() + " (pass --python with that interpreter)");
  std::string pylib = abi3 ? "python3.lib" : "python" + row.build_python.nodot() + ".lib";
  if (!has_lib(f.libs, pylib))
    problems.push_back(py + ": no " + pylib + " in " + f.libs_dir +
                       " (the import library the extension links; "
                       "python.org's installer and actions/setup-python put it there)");
  if (!f.torch) {
    problems.push_back(py + " has no torch package: install torch " + row.torch.str() + ", its CUDA " +
                       row.cuda.release_str() + " build, into it (or pass --python with the interpreter that has it)");
  } else {
    const auto& t = *f.torch;
    if (t.version.empty())
      problems.push_back(t.root + "\\version.py names no __version__ (a damaged torch install?)");
    else if (t.release() != row.torch)
      problems.push_back("torch in " + t.root + " is " + t.version + "; row " + row.id + " needs torch " +
                         row.torch.str());
    if (t.cuda.empty())
      problems.push_back("torch " + t.version + " in " + t.root + " is a CPU build; row " + row.id +
                         " needs its CUDA " + row.cuda.release_str() + " build");
    else if (t.cuda != row.cuda.release_str())
      problems.push_back("torch " + t.version + " in " + t.root + " is built for CUDA " + t.cuda + "; row " + row.id +
                         " needs its CUDA " + row.cuda.release_str() + " build");
    if (t.include_dirs.size() < 2)
      problems.push_back(t.root + " lacks include\\ or include\\torch\\csrc\\api\\include (torch's C++ headers)");
    std::string missing;
    for (const auto& lib : torch_libs)
      if (!has_lib(t.libs, lib + ".lib")) missing += (missing.empty() ? "" : ", ") + lib + ".lib";
    if (!missing.empty()) problems.push_back(t.lib_dir + " lacks " + missing + " (torch's import libraries)");
  }
  if (problems.empty()) return;
  std::string msg = "the build Python cannot build row " + row.id + ":";
  for (const auto& p : problems) msg += "\n  - " + p;
  throw UsageError(msg);
}

}  // namespace sb::toolchain
