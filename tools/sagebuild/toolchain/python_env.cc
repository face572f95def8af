#include "sagebuild/toolchain/python_env.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <system_error>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"

namespace sb::toolchain {

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (auto nl = text.rfind('\n'); nl != std::string_view::npos) text = text.substr(nl + 1);
  return std::string(text);
}

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
# The directories whose modification time tells a cached answer is stale
# (a torch installed, upgraded or removed changes its site-packages).
info["sites"] = sorted({p for p in sys.path if p and os.path.isdir(p) and p.endswith("-packages")})
print(json.dumps(info))
)PY";
}

PythonInfo parse_python_query(std::string_view text, const std::filesystem::path& exe) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(last_line(text));
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
    throw UsageError(exe.string() + " gave an unexpected answer to the interpreter query (" + e.what() +
                     "): " + std::string(text.substr(0, 300)));
  }
}

PythonInfo query_python(ProcessRunner& runner, const std::filesystem::path& python) {
  Result r = runner.run(Command{{python.string(), "-c", std::string(python_query_script())}});
  if (!r.spawned) throw UsageError("cannot run Python " + python.string() + ": " + r.err + " (pass --python PATH)");
  if (r.exit_code != 0)
    throw UsageError(python.string() + " failed the interpreter query (exit " + std::to_string(r.exit_code) +
                     "): " + r.err);
  return parse_python_query(r.out, python);
}

namespace {

namespace fs = std::filesystem;

// Modification time in nanoseconds, or -1 when the path cannot be read.
long long mtime_ns(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return -1;
  return static_cast<long long>(t.time_since_epoch().count());
}

}  // namespace

PythonInfo query_python_cached(ProcessRunner& runner, const fs::path& python, const fs::path& cache_dir) {
  // Importing torch takes seconds; a no-op build must not pay it every time.
  // The answer is reused while the interpreter and its site-packages
  // directories keep their modification times.  It is keyed by the path the
  // caller names, not the interpreter it resolves to: a venv's bin/python is
  // a link to the system's, and sees other site-packages (another torch, or
  // one where the system has none).
  std::error_code ec, ec_named;
  fs::path exe = fs::canonical(python, ec);
  fs::path named = fs::absolute(python, ec_named).lexically_normal();
  if (ec || ec_named || cache_dir.empty()) return query_python(runner, python);
  fs::path file = cache_dir / "pythons" / (hex(sha256(named.string())).substr(0, 24) + ".json");
  try {
    if (fs::exists(file)) {
      auto j = nlohmann::json::parse(read_file(file));
      bool fresh = j.at("exe_mtime").get<long long>() == mtime_ns(exe);
      for (const auto& [dir, t] : j.at("sites").items()) fresh = fresh && t.get<long long>() == mtime_ns(dir);
      if (fresh) return parse_python_query(j.at("answer").get<std::string>(), python);
    }
  } catch (const std::exception&) {
    // A damaged cache entry is re-queried and rewritten.
  }
  Result r = runner.run(Command{{python.string(), "-c", std::string(python_query_script())}});
  if (!r.spawned || r.exit_code != 0) return query_python(runner, python);  // reports the error
  std::string answer = last_line(r.out);
  PythonInfo info = parse_python_query(answer, python);
  nlohmann::json entry = {
      {"python", named.string()}, {"exe", exe.string()}, {"exe_mtime", mtime_ns(exe)}, {"answer", answer}};
  entry["sites"] = nlohmann::json::object();
  for (const auto& dir : nlohmann::json::parse(answer).value("sites", nlohmann::json::array()))
    entry["sites"][dir.get<std::string>()] = mtime_ns(dir.get<std::string>());
  fs::create_directories(file.parent_path(), ec);
  try {
    write_file_atomic(file, entry.dump() + "\n");
  } catch (const IoError&) {
    // A read-only cache only costs the next build the query.
  }
  return info;
}

}  // namespace sb::toolchain
