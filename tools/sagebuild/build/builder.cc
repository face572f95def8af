#include "sagebuild/build/builder.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <thread>
#include <variant>

#include <nlohmann/json.hpp>

#include "sagebuild/build/cache.h"
#include "sagebuild/build/kernel_manifest.h"
#include "sagebuild/build/ninja_writer.h"
#include "sagebuild/build/plan.h"
#include "sagebuild/build/smoke_test.h"
#include "sagebuild/build/stage.h"
#include "sagebuild/build/windows_build.h"
#include "sagebuild/build/windows_plan.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/matrix/arch.h"
#include "sagebuild/pack/wheel_writer.h"

namespace sb::build {

namespace fs = std::filesystem;

fs::path find_source_dir(const fs::path& start) {
  fs::path p = fs::absolute(start);
  for (fs::path d = p; !d.empty(); d = d.parent_path()) {
    if (fs::exists(d / "matrix/build-matrix.yaml") && fs::exists(d / "kernels")) return d;
    if (d == d.parent_path()) break;
  }
  throw UsageError("cannot find the SageAttention source tree above " + p.string() +
                   " (expected matrix/build-matrix.yaml and kernels/): run from the repository or pass --source-dir");
}

std::vector<std::string> resolve_launcher(const std::string& launcher, const std::string& path_env) {
  if (launcher == "none") return {};
  if (launcher == "auto") {
    for (const char* n : {"sccache", "ccache"})
      if (auto p = find_program(n, path_env)) return {p->string()};
    return {};
  }
  if (launcher == "ccache" || launcher == "sccache") {
    auto p = find_program(launcher, path_env);
    if (!p) throw UsageError("--launcher " + launcher + ": " + launcher + " is not on PATH; install it or use --launcher none");
    return {p->string()};
  }
  throw UsageError("--launcher: \"" + launcher + "\" is not one of ccache, sccache, none, auto");
}

namespace {

std::string path_env() {
  const char* p = std::getenv("PATH");
  return p ? p : "/usr/bin:/bin";
}

std::string safe_dir_name(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '+')) c = '_';
  return s;
}

struct Prepared {
  std::vector<sb::matrix::Row> rows;
  std::string name;  // profile or row id, for the work dir and the summary
  fs::path source;
};

Prepared select_rows(BuildOptions& o) {
  Prepared p;
  p.source = o.source_dir.empty() ? find_source_dir(fs::current_path()) : fs::absolute(o.source_dir);
  fs::path matrix_path = o.matrix_path.empty() ? p.source / "matrix/build-matrix.yaml" : o.matrix_path;
  sb::matrix::Matrix m = sb::matrix::load_matrix(matrix_path);
  if (!o.rows.empty()) {
    for (const auto& id : o.rows) {
      const sb::matrix::Row* r = sb::matrix::find_row(m, id);
      if (!r) {
        std::string some;
        int n = 0;
        for (const auto& row : m.rows)
          if (n++ < 5) some += "\n  " + row.id;
        throw UsageError("--row " + id + ": no such row in " + matrix_path.string() + "; rows look like:" + some +
                         "\n  (`sagebuild matrix` lists them all)");
      }
      p.rows.push_back(*r);
    }
    p.name = o.rows.size() == 1 ? o.rows.front() : "rows-" + hex(sha256(o.rows.front())).substr(0, 8);
  } else {
    p.rows = sb::matrix::expand(m, o.profile).rows;
    p.name = o.profile;
  }
  if (!o.archs.empty()) {
    std::vector<sb::matrix::Arch> archs;
    for (const auto& a : o.archs) archs.push_back(parse_arch_arg(a, "--archs"));
    std::sort(archs.begin(), archs.end(), sb::matrix::arch_less);
    for (auto& r : p.rows) {
      r.archs = archs;
      r.ptx_arch = sb::matrix::ptx_arch(archs);
    }
  }
  return p;
}

void prepare_options(BuildOptions& o) {
  if (o.jobs < 0) throw UsageError("--jobs: expected a positive number, got " + std::to_string(o.jobs));
  if (o.jobs == 0) o.jobs = std::max(1u, std::thread::hardware_concurrency());
  if (o.cache_dir.empty()) o.cache_dir = default_cache_dir();
  o.cache_dir = fs::absolute(o.cache_dir);
  o.out_dir = fs::absolute(o.out_dir);
  o.toolchain.cache_dir = o.cache_dir;
  if (o.toolchain.path_env.empty()) o.toolchain.path_env = path_env();
  if (!o.toolchain.cuda_home_env)
    if (const char* c = std::getenv("CUDA_HOME"); c && *c) o.toolchain.cuda_home_env = fs::path(c);
}

std::string source_revision(ProcessRunner& runner, const fs::path& source) {
  Result r = runner.run(Command({"git", "-C", source.string(), "rev-parse", "HEAD"}));
  if (!r.ok()) return "unknown";
  std::string s = r.out.substr(0, r.out.find('\n'));
  Result d = runner.run(Command({"git", "-C", source.string(), "status", "--porcelain", "--untracked-files=no",
                                 "--", "kernels", "python"}));
  if (d.ok() && !d.out.empty()) s += "-dirty";
  return s;
}

// The platform tag of the rows this host can build natively.
std::string host_platform_tag() {
#if defined(_WIN32)
  return "win_amd64";
#elif defined(__linux__) && defined(__x86_64__)
  return "linux_x86_64";
#elif defined(__linux__) && defined(__aarch64__)
  return "linux_aarch64";
#else
  return "unsupported-host";
#endif
}

// What a row's wheel is made of: the payload's names and contents, the
// build-info, the licence and the options that change the checks.  Equal
// stamps mean an identical wheel, already verified and smoke-tested.
std::string row_stamp(const std::vector<pack::PayloadFile>& payload, const distinfo::BuildInfo& info,
                      const fs::path& license, bool smoke) {
  Sha256 h;
  auto field = [&](std::string_view s) {
    h.update(std::to_string(s.size()) + ":");
    h.update(s);
  };
  field("sagebuild-row-stamp-1");
  for (const auto& f : payload) {
    field(f.archive_name);
    if (const auto* path = std::get_if<fs::path>(&f.data)) field(hex(sha256_file(*path)));
    else field(hex(sha256(std::get<std::string>(f.data))));
  }
  nlohmann::json j;
  distinfo::to_json(j, info);
  field(j.dump());
  field(fs::exists(license) ? hex(sha256_file(license)) : "no licence");
  field(smoke ? "smoke" : "no smoke");
  return hex(h.finish());
}

std::string arch_names(const sb::matrix::Row& r) {
  std::string s;
  for (const auto& a : r.archs) s += (s.empty() ? "" : " ") + a.name;
  return s;
}

}  // namespace

int run_build(BuildOptions o, ProcessRunner& runner, std::ostream& out) {
  prepare_options(o);
  Prepared prep = select_rows(o);
  fs::path work = o.build_dir.empty() ? o.cache_dir / "work" / safe_dir_name(prep.name) : fs::absolute(o.build_dir);
  std::vector<std::string> launcher = resolve_launcher(o.launcher, o.toolchain.path_env);
  out << "sagebuild: " << prep.rows.size() << " row(s) of " << prep.name << "; cache " << o.cache_dir.string()
      << "; build dir " << work.string() << "\n";
  // Builds sharing a cache share <cache>/work/<profile or row> (build.ninja,
  // ninja's log, each row's staging and smoke-test venv): one at a time uses
  // it; the next waits, then finds the objects already built.
  std::optional<FileLock> work_lock;
  if (!o.dry_run)
    work_lock.emplace(work.string() + ".lock", [&] {
      out << "sagebuild: waiting for another build using " << work.string() << " to finish\n" << std::flush;
    });

  std::vector<RowResult> results(prep.rows.size());
  std::vector<bool> alive(prep.rows.size(), true);
  bool stop = false;
  auto fail = [&](std::size_t i, const std::string& stage, const std::string& why) {
    results[i].ok = false;
    results[i].stage = stage;
    results[i].error = why;
    alive[i] = false;
    if (!o.keep_going) stop = true;
  };
  for (std::size_t i = 0; i < prep.rows.size(); ++i) {
    results[i].row_id = prep.rows[i].id;
    for (const auto& a : prep.rows[i].archs) results[i].archs.push_back(a.name);
  }
  auto t_start = std::chrono::steady_clock::now();

  // 1. Toolchains (found or provisioned), and the kernel manifests.
  ToolchainOptions topt = o.toolchain;
  if (o.dry_run) {
    topt.provision = false;
    topt.plan_only = true;
  }
  ToolchainResolver resolver(runner, topt);
  std::vector<std::optional<Toolchain>> tcs(prep.rows.size());
  std::map<std::string, KernelManifest> manifests;
  std::vector<RowInput> inputs;
  std::vector<std::size_t> input_row;  // inputs[k] is row input_row[k]
  // win_amd64 rows: planned with placeholders by a dry run on another host;
  // discovered and built by build_windows_rows() on a Windows host.
  std::vector<WindowsRowInput> win_inputs;
  std::vector<std::size_t> win_row;
#if defined(_WIN32)
  std::optional<WindowsToolchainFacts> vs_facts;  // vswhere + vcvars64, once per build
  std::optional<WindowsProcessRunner> vc_runner;  // its children run in vcvars64's environment
#endif
  for (std::size_t i = 0; i < prep.rows.size() && !stop; ++i) {
    const auto& row = prep.rows[i];
    try {
      if (!manifests.count(row.kernels_manifest))
        manifests[row.kernels_manifest] = load_kernel_manifest(prep.source / row.kernels_manifest);
      // build_info.json names, per family, what verify looks for in the
      // kernels' SASS: refuse before compiling rather than after.
      std::string missing;
      for (const auto& f : manifests[row.kernels_manifest].families)
        if (f.symbol_marker.empty()) missing += (missing.empty() ? "" : ", ") + ("families." + f.name + ".symbol_marker");
      if (!missing.empty())
        throw UsageError(row.kernels_manifest + ": " + missing + " missing; build_info.json needs, per family, a "
                         "substring of its kernel names that verify looks for in each arch's SASS "
                         "(e.g. \"symbol_marker\": \"quant_qk_kernel\")");
      if (row.platform == "win_amd64" && host_platform_tag() != "win_amd64") {
        if (!o.dry_run)
          throw UsageError("row " + row.id + " is for win_amd64: building it needs a Windows host with Visual Studio "
                           "(the C++ x64 tools) and the CUDA toolkit; this host builds " + host_platform_tag() +
                           " rows (`--dry-run` prints the row's Windows plan here; its CI job runs on a windows "
                           "runner: `sagebuild matrix --format github` names it)");
        // A dry run plans it with labelled placeholders for what only a
        // Windows machine can tell (VS, vcvars, CUDA_PATH, torch, Python).
        out << "[" << row.id << "] Windows toolchain: not discoverable on this host; the plan shows placeholders\n";
        win_inputs.push_back(WindowsRowInput{row, manifests[row.kernels_manifest], placeholder_windows_facts()});
        win_row.push_back(i);
        continue;
      }
      if (row.platform != host_platform_tag())
        throw UsageError("row " + row.id + " is for " + row.platform + "; this host builds " + host_platform_tag() +
                         " rows (run this row's job on a " + row.platform + " runner: `sagebuild matrix --format github` "
                         "names it)");
#if defined(_WIN32)
      if (row.platform == "win_amd64") {
        // Never compiled or run on Windows yet (no Windows machine or CI):
        // Visual Studio once (vswhere, vcvars64), then the row's CUDA and its
        // build Python's torch, asked in vcvars64's environment.
        if (!vs_facts) {
          const char* pf86 = std::getenv("ProgramFiles(x86)");
          vs_facts = discover_windows_toolchain(runner, WindowsDiscoveryOptions{pf86 ? pf86 : "", false});
          vc_runner.emplace(windows_build_environment(*vs_facts));
        }
        out << "[" << row.id << "] Windows toolchain...\n" << std::flush;
        std::string python = o.toolchain.python ? o.toolchain.python->string() : "python";
        WindowsToolchainFacts facts = discover_windows_row(*vc_runner, *vs_facts, row, python);
        out << "  \u2713 MSVC " << facts.msvc_version << ": " << facts.cl << "\n"
            << "  \u2713 CUDA " << facts.nvcc_version << ": " << facts.nvcc << "\n"
            << "  \u2713 torch " << facts.torch_version << ": " << facts.torch_root << "\n"
            << "  \u2713 Python headers and import libraries: " << facts.python_include << ", " << facts.python_lib_dir
            << "\n";
        win_inputs.push_back(WindowsRowInput{row, manifests[row.kernels_manifest], facts});
        win_row.push_back(i);
        continue;
      }
#endif
      out << "[" << row.id << "] toolchain...\n" << std::flush;
      tcs[i] = resolver.resolve(row, manifests[row.kernels_manifest].stable_binding_for(row.torch));
      for (const auto& c : tcs[i]->checks) out << "  \u2713 " << c.what << ": " << c.found << "\n";
      inputs.push_back(RowInput{row, manifests[row.kernels_manifest], tcs[i]->planner_view()});
      input_row.push_back(i);
    } catch (const ConfigError& e) {
      fail(i, "toolchain", e.what());
    } catch (const UsageError& e) {
      fail(i, "toolchain", e.what());
    } catch (const IoError& e) {
      fail(i, "toolchain", e.what());
    }
  }

#if defined(_WIN32)
  // win_amd64 rows on a Windows host: their own plan, ninja run, pack and
  // verify (windows_build.h); the summary below reports them with the rest.
  if (!o.dry_run && !stop && !win_inputs.empty()) {
    WindowsBuildSettings ws;
    ws.source_dir = prep.source;
    ws.cache_dir = o.cache_dir;
    ws.work_dir = work;
    ws.out_dir = o.out_dir;
    ws.jobs = o.jobs;
    ws.keep_going = o.keep_going;
    ws.allow_unsupported_compiler = o.toolchain.allow_unsupported_compiler;
    ws.source_revision = source_revision(runner, prep.source);
    std::vector<RowResult> built = build_windows_rows(win_inputs, ws, *vc_runner, out);
    for (std::size_t k = 0; k < built.size(); ++k) {
      results[win_row[k]] = std::move(built[k]);
      alive[win_row[k]] = false;  // done with: the Linux steps below skip it
    }
  }
#endif

  // 2. The compile graph.
  PlanSettings ps;
  ps.repo_root = prep.source;
  ps.objects_dir = o.cache_dir / "objects";
  ps.work_dir = work;
  ps.launcher = launcher;
  CompileGraph graph;
  if (!stop && !inputs.empty()) {
    graph = plan_compile(inputs, ps);
    out << "kernels: " << graph.kernels_cached << " objects cached, " << graph.kernels_to_compile
        << " to compile; bindings: " << graph.bindings_cached << " cached, " << graph.bindings_to_compile
        << " to compile; links: " << graph.links << " (" << graph.links_cached << " shared extensions cached)\n";
    for (std::size_t k = 0; k < graph.rows.size(); ++k) {
      const auto& rg = graph.rows[k];
      auto& res = results[input_row[k]];
      res.families = rg.families;
      for (const auto& obj : rg.kernels) (obj.cached ? res.kernels_cached : res.kernels_compiled)++;
      out << "  " << rg.row_id << ": families " << (rg.families.empty() ? "none" : "");
      for (const auto& f : rg.families) out << f << " ";
      if (!rg.skipped_families.empty()) {
        out << "(skipped:";
        for (std::size_t s = 0; s < rg.skipped_families.size(); ++s)
          out << (s ? ";" : "") << " " << rg.skipped_families[s].name << ", " << rg.skipped_families[s].why;
        out << ")";
      }
      out << "\n";
    }
  }

  if (o.dry_run) {
    out << "\ndry run: the commands a build would run (compile nothing)\n";
    for (const auto& e : graph.edges) out << "# " << e.description << "\n" << edge_shell_command(e) << "\n";
    if (!win_inputs.empty()) {
      try {
        WindowsPlanSettings ws;
        ws.repo_root = prep.source;
        ws.win_repo_root = "<SOURCE_DIR>";
        ws.win_objects_dir = "<CACHE_DIR>\\objects";
        ws.win_work_dir = "<BUILD_DIR>";
        WindowsPlan wp = plan_windows_compile(win_inputs, ws, o.toolchain.allow_unsupported_compiler);
        out << "\nWindows (win_amd64) plan: CreateProcess command lines, run in vcvars64.bat's environment on a "
               "Windows host;\n<...> are placeholders for what only that host can tell: <CUDA_PATH> (%CUDA_PATH%), "
               "<VCToolsInstallDir> (vswhere + vcvars64.bat), <TORCH_DIR> (the row's torch package), <PYTHON_PREFIX> "
               "(the build Python), <SOURCE_DIR>, <CACHE_DIR>, <BUILD_DIR>\n";
        for (const auto& e : wp.edges) out << "# " << e.description << "\n" << windows_command_line(e) << "\n";
        for (const auto& rg : wp.rows) {
          out << "  " << rg.row_id << ": families ";
          for (const auto& f : rg.families) out << f << " ";
          out << "-> " << rg.extension.string() << "\n";
        }
      } catch (const std::exception& e) {
        for (auto i : win_row) fail(i, "plan", e.what());
      }
    }
    for (std::size_t k = 0; k < graph.rows.size(); ++k) {
      const auto& row = prep.rows[input_row[k]];
      out << "# " << row.id << ": stage, pack " << row.wheel_filename << " into " << fs::absolute(o.out_dir).string()
          << ", verify, smoke test\n";
    }
    bool any_failed = false;
    for (const auto& r : results)
      if (!r.stage.empty()) {
        any_failed = true;
        out << "\u2717 " << r.row_id << ": " << r.error << "\n";
      }
    return any_failed ? 1 : 0;
  }

  // 3. Compile and link with ninja.
  if (!stop && !graph.edges.empty()) {
    fs::create_directories(ps.objects_dir);
    for (const auto& rg : graph.rows) fs::create_directories(rg.extension.parent_path());
    fs::create_directories(work);
    write_file_atomic(work / "build.ninja", write_ninja(graph));
    std::vector<std::string> argv = {"ninja", "-C", work.string(), "-j", std::to_string(o.jobs)};
    if (o.keep_going) argv.insert(argv.end(), {"-k", "0"});
    for (const auto& rg : graph.rows) argv.push_back(rg.row_id);
    Command ninja(argv);
    ninja.stream_output = true;
    Result r = runner.run(ninja);
    if (!r.spawned) throw UsageError("cannot run ninja: " + r.err + " (install ninja-build)");
    for (std::size_t k = 0; k < graph.rows.size(); ++k) {
      std::size_t i = input_row[k];
      if (!alive[i]) continue;
      if (r.exit_code == 0) continue;
      // Which rows did ninja finish?  Ask it, per row target.
      Result q = runner.run(Command({"ninja", "-C", work.string(), "-n", graph.rows[k].row_id}));
      if (!(q.ok() && q.out.find("no work to do") != std::string::npos)) {
        std::string msg = "compile or link failed (see the ninja output above; build dir " + work.string() + ")";
        results[i].ok = false;
        results[i].stage = "compile";
        results[i].error = msg;
        alive[i] = false;
      }
    }
    if (r.exit_code != 0 && !o.keep_going) stop = true;
  }

  // 4. Per row: stage, pack, verify, smoke test, publish into --out.
  std::string revision = source_revision(runner, prep.source);
  for (std::size_t k = 0; k < graph.rows.size(); ++k) {
    std::size_t i = input_row[k];
    const auto& row = prep.rows[i];
    auto& res = results[i];
    if (!alive[i]) continue;
    if (stop) {
      res.stage = "skipped";
      res.error = "not built: an earlier row failed (use --keep-going to build the others)";
      continue;
    }
    const auto& rg = graph.rows[k];
    const Toolchain& tc = *tcs[i];
    fs::path row_dir = work / "rows" / safe_dir_name(row.id);
    fs::path dist = row_dir / "dist";
    std::error_code ec;
    fs::remove_all(dist, ec);
    fs::create_directories(dist);
    fs::path built;
    try {
      res.stage = "pack";
      auto info = make_build_info(row, inputs[k].toolchain, tc.host.id, tc.host.version(), tc.row_torch_cuda,
                                  tc.cuda.version.str(), rg, inputs[k].manifest, revision);
      auto payload = stage_payload(prep.source / "python" / row.package, row.package, rg.extension, rg.extension_name);
      // Up to date: same inputs as the last good build, and its wheel still in --out untouched.
      std::string stamp = row_stamp(payload, info, prep.source / "LICENSE", o.smoke);
      fs::path stamp_file = row_dir / "stamp.json";
      fs::path previous = o.out_dir / row.wheel_filename;
      if (fs::exists(stamp_file) && fs::exists(previous)) {
        auto j = nlohmann::json::parse(read_file(stamp_file), nullptr, false);
        if (!j.is_discarded() && j.value("stamp", "") == stamp && j.value("sha256", "") == hex(sha256_file(previous))) {
          res.stage = "done";
          res.wheel = previous;
          res.size = fs::file_size(previous);
          res.sha256 = j.value("sha256", "");
          res.smoke = "up to date: packed, verified and smoke-tested by an earlier build";
          res.ok = true;
          res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
          out << "[" << row.id << "] up to date: " << res.wheel.string() << "\n";
          continue;
        }
      }
      fs::remove(stamp_file, ec);
      built = pack_row_wheel(row, info, payload, prep.source, dist);
      res.stage = "verify";
      verify_row_wheel(built, res);
      if (o.smoke) {
        res.stage = "smoke";
        bool torch_here = tc.torch_python.has_value();
        SmokeRequest sr{built, row.package, rg.extension_name, row.torch,
                        torch_here ? *tc.torch_python : tc.python, torch_here, row_dir / "smoke"};
        fs::create_directories(sr.scratch);
        SmokeResult smoke = smoke_test(runner, sr);
        res.smoke = smoke.message;
        if (!smoke.ok) throw UsageError("smoke test: " + smoke.message);
      } else {
        res.smoke = "skipped (--no-smoke-test)";
      }
      finish_row(built, o.out_dir, res);
      write_file_atomic(stamp_file, nlohmann::json{{"stamp", stamp}, {"sha256", res.sha256}}.dump() + "\n");
    } catch (const std::exception& e) {
      // A failed row leaves no wheel behind.
      if (!built.empty()) fs::remove(built, ec);
      res.ok = false;
      res.error = e.what();
      if (!o.keep_going) stop = true;
    }
    // Compiles are shared between rows: a row's time runs from the start of the build.
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    out << "[" << row.id << "] " << (res.ok ? "ok: " + res.wheel.string() + " (" + res.smoke + ")" : "FAILED in " + res.stage) << "\n";
  }
  // Rows never reached (an earlier failure stopped the toolchain loop).
  for (auto& r : results)
    if (r.stage.empty()) {
      r.stage = "skipped";
      r.error = "not built: an earlier row failed (use --keep-going to build the others)";
    }

  out << "\n" << format_table(results);
  if (const char* gh = std::getenv("GITHUB_STEP_SUMMARY"); gh && *gh) {
    std::ofstream f(gh, std::ios::app);
    f << "### sagebuild: " << prep.name << "\n\n" << format_markdown(results) << "\n";
  }
  if (!o.json_path.empty()) write_file_atomic(o.json_path, to_json(results, prep.name).dump(2) + "\n");
  bool all_ok = std::all_of(results.begin(), results.end(), [](const RowResult& r) { return r.ok; });
  return all_ok ? 0 : 1;
}

int run_doctor(BuildOptions o, ProcessRunner& runner, std::ostream& out) {
  prepare_options(o);
  Prepared prep = select_rows(o);
  ToolchainOptions topt = o.toolchain;
  topt.provision = false;
  ToolchainResolver resolver(runner, topt);
  bool ok = true;
  auto line = [&](bool good, const std::string& what, const std::string& found, const std::string& fix) {
    out << (good ? "\u2713 " : "\u2717 ") << what << ": " << found << (good || fix.empty() ? "" : "\n    fix: " + fix) << "\n";
  };
  bool has_ninja = find_program("ninja", topt.path_env).has_value();
  line(has_ninja, "ninja", has_ninja ? find_program("ninja", topt.path_env)->string() : "not on PATH", "install ninja-build");
  ok = ok && has_ninja;
  auto launcher = resolve_launcher("auto", topt.path_env);
  line(true, "compiler launcher", launcher.empty() ? "none (builds still work, without ccache/sccache)" : launcher.front(), "");
  line(true, "cache", o.cache_dir.string(), "");
  for (const auto& row : prep.rows) {
    out << "\n" << row.id << " (torch " << row.torch << ", CUDA " << row.cuda << ", archs " << arch_names(row) << ")\n";
    for (const auto& c : resolver.diagnose(row)) {
      bool provisionable = !c.ok && (c.what.rfind("torch", 0) == 0 || c.what.rfind("CUDA", 0) == 0) &&
                           c.found.find("not in the cache") != std::string::npos;
      line(c.ok, c.what, c.found + (provisionable ? " (a build will download it)" : ""), c.fix);
      if (!c.ok && !provisionable && c.what.rfind("CUDA", 0) != 0) ok = false;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace sb::build
