#include "sagebuild/build/python_env.h"

#include <nlohmann/json.hpp>

#include "sagebuild/common/error.h"

namespace sb::build {

std::string_view python_query_script() {
  return R"PY(
import json, os, sys, sysconfig
info = {"version": [sys.version_info[0], sys.version_info[1]],
        "include": sysconfig.get_paths().get("include", ""),
        "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX") or ""}
info["has_headers"] = os.path.exists(os.path.join(info["include"], "Python.h"))
try:
    import torch
    info["torch"] = {"version": torch.__version__, "cuda": torch.version.cuda or "",
                     "cxx11_abi": bool(torch._C._GLIBCXX_USE_CXX11_ABI),
                     "dir": os.path.dirname(torch.__file__)}
except Exception:
    pass
print(json.dumps(info))
)PY";
}

PythonInfo parse_python_query(std::string_view text, const std::filesystem::path& exe) {
  nlohmann::json j;
  try {
    // Import-time chatter may precede the JSON: take the last line.
    std::string_view last = text;
    while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) last.remove_suffix(1);
    if (auto nl = last.rfind('\n'); nl != std::string_view::npos) last = last.substr(nl + 1);
    j = nlohmann::json::parse(last);
    PythonInfo p;
    p.executable = exe;
    p.major = j.at("version").at(0).get<int>();
    p.minor = j.at("version").at(1).get<int>();
    p.include_dir = j.at("include").get<std::string>();
    p.has_headers = j.at("has_headers").get<bool>();
    p.ext_suffix = j.at("ext_suffix").get<std::string>();
    if (j.contains("torch")) {
      const auto& t = j["torch"];
      p.torch = PythonTorch{t.at("version").get<std::string>(), t.at("cuda").get<std::string>(),
                            t.at("cxx11_abi").get<bool>(), t.at("dir").get<std::string>()};
    }
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(exe.string() + " gave an unexpected answer to the interpreter query (" +
                     e.what() + "): " + std::string(text.substr(0, 300)));
  }
}

PythonInfo query_python(ProcessRunner& runner, const std::filesystem::path& python) {
  Result r = runner.run(Command{{python.string(), "-c", std::string(python_query_script())}});
  if (!r.spawned) throw UsageError("cannot run Python " + python.string() + ": " + r.err + " (pass --python PATH)");
  if (r.exit_code != 0)
    throw UsageError(python.string() + " failed the interpreter query (exit " +
                     std::to_string(r.exit_code) + "): " + r.err);
  return parse_python_query(r.out, python);
}

}  // namespace sb::build
