#include "sagebuild/rows/pipeline.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>
#include <ostream>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/common/text.h"
#include "sagebuild/rows/compile_log.h"
#include "sagebuild/rows/smoke.h"
#include "sagebuild/rows/stage.h"
#include "sagebuild/rows/stamp.h"
#include "sagebuild/run/ninja.h"

namespace sb::rows {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

bool failed(const RowResult& r) { return !r.ok && !r.stage.empty(); }

}  // namespace

void compile_rows(const plan::CompileGraph& graph, const std::vector<RowResult*>& results, const PipelineSettings& s,
                  run::ProcessRunner& build_runner, std::ostream& out) {
  std::vector<graph::Target> targets;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < graph.rows.size(); ++k) {
    if (failed(*results[k])) continue;
    graph::Target t{graph.rows[k].row_id, {}};
    for (const auto& e : graph.rows[k].extensions)
      if (!e.path.empty())
        t.outputs.push_back(e.path);
      else  // planned kernels-only: no link, the kernel objects are the row's outputs
        for (const auto& obj : e.kernels) t.outputs.push_back(obj.object);
    targets.push_back(std::move(t));
    names.push_back(graph.rows[k].row_id);
  }
  if (graph.edges.empty() || names.empty()) return;
  fs::create_directories(s.work_dir);
  for (const auto& e : graph.edges) fs::create_directories(e.output.parent_path());
  const double memory = available_memory_gib().value_or(0);
  if (int depth = run::memory_pool_depth(graph.edges, memory); depth > 0)
    out << "memory: units that declare their peak run at most " << depth << " at once (" << static_cast<int>(memory)
        << " GiB available)\n";
  write_file_atomic(s.work_dir / "build.ninja", run::ninja_file(graph.edges, targets, memory));
  CompileLog log(out);
  run::NinjaRun ninja{s.work_dir, s.jobs, s.keep_going, s.ninja, {}};
  // Compilers' output comes on ninja's stdout (`out` escapes it); its own
  // complaints on stderr, escaped here.
  PrintableLines err;
  ninja.on_output = [&log, &err](std::string_view chunk, bool from_stderr) {
    if (from_stderr)
      std::cerr << err.feed(chunk) << std::flush;
    else
      log.feed(chunk);
  };
  auto unfinished = run::run_ninja(build_runner, ninja, names);
  std::cerr << err.finish();
  log.finish();
  if (log.warnings() > 0) {
    fs::path full = s.work_dir / "ptxas-warnings.log";
    write_file_atomic(full, log.full_text());
    out << log.summary(full);
  }
  for (std::size_t k = 0; k < graph.rows.size(); ++k)
    if (std::find(unfinished.begin(), unfinished.end(), graph.rows[k].row_id) != unfinished.end()) {
      results[k]->stage = "compile";
      results[k]->error = "compile or link failed (see the ninja output above; build dir " + s.work_dir.string() + ")";
    }
}

namespace {

void smoke(const plan::RowInput& in, const plan::RowGraph& rg, const fs::path& wheel, const fs::path& row_dir,
           const PipelineSettings& s, run::ProcessRunner& runner, RowResult& res) {
  const auto& tc = in.toolchain;
  std::optional<toolchain::PythonInfo> python = tc.smoke_python;
  bool importable = tc.torch_importable;
  if (s.smoke_python)
    if (auto own = s.smoke_python(in.row.id)) {
      python = own;
      const auto& t = own->torch;
      importable = t && t->release() == in.row.torch && t->cuda == in.row.cuda.release_str();
      if (!importable)
        throw UsageError("smoke test: " + own->executable.string() + " (--provision-torch) imports " +
                         (t ? "torch " + t->version + " for CUDA " + (t->cuda.empty() ? "none" : t->cuda)
                            : std::string("no torch")) +
                         ", the row needs torch " + in.row.torch.str() + " for CUDA " + in.row.cuda.release_str());
    }
  if (!python) {
    res.smoke = "not run: no Python here to install the wheel with";
    return;
  }
  SmokeRequest sr{wheel,      in.spec.package,   {},           in.row.torch.str(), *python,
                  importable, row_dir / "smoke", tc.cuda_stubs};
  for (std::size_t i = 0; i < rg.extensions.size(); ++i) {
    const auto& spec = in.spec.extensions[i];
    bool driver = std::find(spec.libraries.begin(), spec.libraries.end(), "cuda") != spec.libraries.end();
    sr.modules.push_back({spec.module, staged_module(spec.module, rg.extensions[i].filename, {}).archive_name,
                          spec.ops_namespace, spec.exports, driver});
  }
  fs::create_directories(sr.scratch);
  SmokeResult r = run_smoke(runner, sr);
  res.smoke = r.message;
  if (!r.ok) throw UsageError("smoke test: " + r.message);
}

// Stage, pack, verify, smoke-test, publish and stamp one compiled row.
void complete_row(const plan::RowInput& in, const plan::RowGraph& rg, const PipelineSettings& s,
                  run::ProcessRunner& runner, RowResult& res) {
  if (in.toolchain.placeholders)
    throw UsageError("row " + in.row.id + ": its toolchain has placeholders; a build needs it discovered");
  fs::path row_dir = s.work_dir / "rows" / safe_dir_name(in.row.id);
  fs::path dist = row_dir / "dist";
  std::error_code ec;
  fs::remove_all(dist, ec);
  fs::create_directories(dist);
  res.stage = "pack";
  std::vector<StagedModule> modules;
  for (std::size_t i = 0; i < rg.extensions.size(); ++i)
    modules.push_back(staged_module(in.spec.extensions[i].module, rg.extensions[i].filename, rg.extensions[i].path));
  auto payload =
      stage_payload(s.source_dir / in.spec.package_dir, in.spec.package, in.spec.package_files, modules, s.source_dir);
  const matrix::Row row = with_platform_tag(in.row, payload, res.platform_tag);
  auto info = make_build_info(row, in.toolchain, in.spec, s.source_revision);
  std::string stamp = row_stamp(payload, info, s.source_dir / in.spec.license_file, s.smoke);
  fs::path stamp_file = row_dir / "stamp.json";
  if (up_to_date(stamp_file, s.out_dir / row.wheel_filename, stamp, res)) return;
  fs::remove(stamp_file, ec);
  fs::path built = pack_row_wheel(row, info, payload, in.spec, s.source_dir, dist);
  try {
    res.stage = "verify";
    verify_row_wheel(built, res);
    res.stage = "smoke";
    if (s.smoke)
      smoke(in, rg, built, row_dir, s, runner, res);
    else
      res.smoke = "skipped (--no-smoke-test)";
    finish_row(built, s.out_dir, res);
  } catch (...) {
    fs::remove(built, ec);  // a failed row leaves no wheel behind
    throw;
  }
  write_stamp(stamp_file, stamp, res.sha256);
}

}  // namespace

std::string safe_dir_name(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '+')) c = '_';
  return s;
}

void run_rows(const plan::CompileGraph& graph, const std::vector<plan::RowInput>& inputs,
              const std::vector<RowResult*>& results, const PipelineSettings& s, run::ProcessRunner& build_runner,
              run::ProcessRunner& runner, std::ostream& out) {
  auto t0 = Clock::now();
  for (std::size_t k = 0; k < graph.rows.size(); ++k) results[k]->families = graph.rows[k].families;
  compile_rows(graph, results, s, build_runner, out);
  bool stop = false;
  for (std::size_t k = 0; k < graph.rows.size(); ++k) {
    RowResult& res = *results[k];
    const auto& rg = graph.rows[k];
    for (const auto& ext : rg.extensions)
      for (const auto& obj : ext.kernels) (obj.cached ? res.kernels_cached : res.kernels_compiled)++;
    if (failed(res)) {
      stop = stop || !s.keep_going;
      continue;
    }
    if (stop) {
      res.stage = "skipped";
      res.error = "not built: an earlier row failed (use --keep-going to build the others)";
      continue;
    }
    try {
      complete_row(inputs[k], rg, s, runner, res);
    } catch (const std::exception& e) {
      res.ok = false;
      res.error = e.what();
      stop = !s.keep_going;
    }
    if (!res.platform_tag.empty()) out << "[" << rg.row_id << "] platform tag " << res.platform_tag << "\n";
    // Compiles are shared between rows: a row's time runs from the start.
    res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    out << "[" << rg.row_id << "] "
        << (res.ok ? (res.smoke.rfind("up to date", 0) == 0 ? "up to date: " : "ok: ") + res.wheel.string() + " (" +
                         res.smoke + ")"
                   : "FAILED in " + res.stage)
        << "\n";
  }
}

}  // namespace sb::rows
