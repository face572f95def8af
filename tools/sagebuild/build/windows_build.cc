#include "sagebuild/build/windows_build.h"

#include <cctype>
#include <chrono>
#include <ostream>

#include "sagebuild/build/ninja_writer.h"
#include "sagebuild/build/stage.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"

namespace sb::build {

namespace fs = std::filesystem;

std::string windows_path_string(const fs::path& p) {
#if defined(_WIN32)
  return p.string();
#else
  std::string s = p.string();
  for (char& c : s)
    if (c == '/') c = '\\';
  return s;
#endif
}

fs::path native_path(const std::string& windows_path) {
#if defined(_WIN32)
  return fs::path(windows_path);
#else
  std::string s = windows_path;
  for (char& c : s)
    if (c == '\\') c = '/';
  return fs::path(s);
#endif
}

namespace {

std::string safe_dir_name(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '+')) c = '_';
  return s;
}

// What build_info.json needs of the toolchain; a Windows build has no
// libstdc++ ABI, so cxx11_abi keeps the schema's default.
RowToolchain planner_view(const WindowsToolchainFacts& f) {
  RowToolchain tc;
  tc.nvcc = native_path(f.nvcc);
  tc.nvcc_version = f.nvcc_version;
  tc.torch_root = native_path(f.torch_root);
  tc.torch_version = f.torch_version;
  tc.host_compiler = "msvc " + f.msvc_version;
  return tc;
}

}  // namespace

std::vector<RowResult> build_windows_rows(const std::vector<WindowsRowInput>& rows, const WindowsBuildSettings& s,
                                          ProcessRunner& runner, std::ostream& out) {
  std::vector<RowResult> results(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    results[i].row_id = rows[i].row.id;
    for (const auto& a : rows[i].row.archs) results[i].archs.push_back(a.name);
    if (rows[i].facts.placeholders)
      throw UsageError("row " + rows[i].row.id + ": the Windows toolchain facts are placeholders; a build needs them "
                       "discovered (discover_windows_toolchain, discover_windows_row)");
  }
  auto t0 = std::chrono::steady_clock::now();

  WindowsPlanSettings ws;
  ws.repo_root = s.source_dir;
  ws.win_repo_root = windows_path_string(s.source_dir);
  ws.win_objects_dir = windows_path_string(s.cache_dir / "objects");
  ws.win_work_dir = windows_path_string(s.work_dir);
  WindowsPlan plan = plan_windows_compile(rows, ws, s.allow_unsupported_compiler);

  fs::create_directories(s.cache_dir / "objects");
  for (const auto& rg : plan.rows) fs::create_directories(native_path(rg.extension.string()).parent_path());
  write_file_atomic(s.work_dir / "build.ninja", write_windows_ninja(plan.edges, plan.rows));

  std::vector<std::string> argv = {s.ninja, "-C", s.work_dir.string(), "-j", std::to_string(s.jobs)};
  if (s.keep_going) argv.insert(argv.end(), {"-k", "0"});
  for (const auto& rg : plan.rows) argv.push_back(rg.row_id);
  Command ninja(argv);
  ninja.stream_output = true;
  Result r = runner.run(ninja);
  if (!r.spawned)
    throw UsageError("cannot run " + s.ninja + ": " + r.err + " (install ninja: `pip install ninja`, or Visual Studio's "
                     "\"C++ CMake tools for Windows\", whose ninja.exe vcvars64 puts on PATH)");

  bool stop = false;
  for (std::size_t k = 0; k < plan.rows.size(); ++k) {
    const auto& in = rows[k];
    const auto& rg = plan.rows[k];
    auto& res = results[k];
    res.families = rg.families;
    res.kernels_compiled = static_cast<int>(rg.kernels.size());
    if (r.exit_code != 0) {
      // Which rows did ninja finish?  Ask it, per row target.
      Result q = runner.run(Command({s.ninja, "-C", s.work_dir.string(), "-n", rg.row_id}));
      if (!(q.ok() && q.out.find("no work to do") != std::string::npos)) {
        res.stage = "compile";
        res.error = "compile or link failed (see the ninja output above; build dir " + s.work_dir.string() + ")";
        if (!s.keep_going) stop = true;
        continue;
      }
    }
    if (stop) {
      res.stage = "skipped";
      res.error = "not built: an earlier row failed (use --keep-going to build the others)";
      continue;
    }
    fs::path dist = s.work_dir / "rows" / safe_dir_name(in.row.id) / "dist";
    std::error_code ec;
    fs::remove_all(dist, ec);
    fs::create_directories(dist);
    fs::path built;
    try {
      res.stage = "pack";
      RowToolchain tc = planner_view(in.facts);
      auto info = make_build_info(in.row, tc, "msvc", in.facts.msvc_version, in.facts.torch_cuda, in.facts.nvcc_version,
                                  rg, in.manifest, s.source_revision);
      auto payload = stage_payload(s.source_dir / "python" / in.row.package, in.row.package,
                                   native_path(rg.extension.string()), rg.extension_name);
      built = pack_row_wheel(in.row, info, payload, s.source_dir, dist);
      res.stage = "verify";
      verify_row_wheel(built, res);
      res.smoke = "not run: the smoke test (fresh venv, pip install, import) is not implemented for Windows";
      finish_row(built, s.out_dir, res);
    } catch (const std::exception& e) {
      if (!built.empty()) fs::remove(built, ec);
      res.ok = false;
      res.error = e.what();
      if (!s.keep_going) stop = true;
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out << "[" << in.row.id << "] " << (res.ok ? "ok: " + res.wheel.string() + " (" + res.smoke + ")" : "FAILED in " + res.stage)
        << "\n";
  }
  return results;
}

}  // namespace sb::build
