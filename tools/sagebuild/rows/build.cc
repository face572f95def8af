#include "sagebuild/rows/build.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <ostream>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/kernel_objects.h"
#include "sagebuild/rows/pipeline.h"
#include "sagebuild/rows/planning.h"
#include "sagebuild/rows/resolve.h"
#include "sagebuild/rows/session.h"
#include "sagebuild/rows/summary.h"
#include "sagebuild/rows/torch_envs.h"

namespace sb::rows {

namespace fs = std::filesystem;

namespace {

std::string source_revision(run::ProcessRunner& runner, const fs::path& source) {
  run::Result r = runner.run(run::Command({"git", "-C", source.string(), "rev-parse", "HEAD"}));
  if (!r.ok()) return "unknown";
  std::string rev = r.out.substr(0, r.out.find('\n'));
  // Our tree's wheels are made of kernels/ and python/; an upstream tree's of all of it.
  std::vector<std::string> argv = {"git", "-C", source.string(), "status", "--porcelain", "--untracked-files=no"};
  if (is_our_tree(source)) argv.insert(argv.end(), {"--", "kernels", "python"});
  run::Result d = runner.run(run::Command(argv));
  if (d.ok() && !d.out.empty()) rev += "-dirty";
  return rev;
}

// 3b. A build: the row pipeline.
void run_pipeline(Session& s, const Resolved& r, const plan::CompileGraph& g, Resolvers& resolvers,
                  run::ProcessRunner& runner, std::ostream& out) {
  if (g.rows.empty() || s.stopped()) return;
  std::vector<RowResult*> results;
  for (auto i : r.row_of) results.push_back(&s.results[i]);
  PipelineSettings ps{
      s.source, s.work, s.o.out_dir, s.o.jobs, s.o.keep_going, s.o.smoke, source_revision(runner, s.source)};
  TorchEnvs envs(s, runner);
  if (s.o.provision_torch && s.o.smoke) {
    for (std::size_t k = 0; k < r.inputs.size(); ++k) try {
        envs.start(r.inputs[k], out);
      } catch (const UsageError& e) {
        s.fail(r.row_of[k], "toolchain", e.what());
      }
    ps.smoke_python = [&envs](const std::string& row_id) { return envs.python_of(row_id); };
  }
  run_rows(g, r.inputs, results, ps, resolvers.build_runner(), runner, out);
}

// Builds sharing a cache share <cache>/work/<profile or row> (build.ninja,
// ninja's log, each row's staging and smoke-test venv): one at a time uses
// it; the next waits, saying so, then finds the objects already built.
void lock_work_dir(const Session& s, std::optional<FileLock>& lock, std::ostream& out) {
  lock.emplace(s.work.string() + ".lock", [&] {
    out << "sagebuild: waiting for another build using " << s.work.string() << " to finish\n" << std::flush;
  });
}

// 4. The summary: a table, GitHub's step summary, --json.
int report(Session& s, std::ostream& out) {
  for (auto& res : s.results)
    if (res.stage.empty()) {  // never reached: an earlier row failed
      res.stage = "skipped";
      res.error = "not built: an earlier row failed (use --keep-going to build the others)";
    }
  out << "\n" << format_table(s.results);
  if (const char* gh = std::getenv("GITHUB_STEP_SUMMARY"); gh && *gh) {
    std::ofstream f(gh, std::ios::app);
    f << "### sagebuild: " << s.name << "\n\n" << format_markdown(s.results) << "\n";
  }
  // The paths in it were checked to be UTF-8 (prepare_options); any other
  // text that is not (a compiler's message) is written with U+FFFD, never a
  // JSON library's internal error.
  if (!s.o.json_path.empty())
    write_file_atomic(s.o.json_path,
                      to_json(s.results, s.name).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return std::all_of(s.results.begin(), s.results.end(), [](const RowResult& r) { return r.ok; }) ? 0 : 1;
}

}  // namespace

int run_build(BuildOptions o, run::ProcessRunner& runner, std::ostream& out) {
  Session s = open_session(std::move(o), runner, out);
  out << "sagebuild: " << s.rows.size() << " row(s) of " << s.name << "; cache " << s.o.cache_dir.string()
      << "; build dir " << s.work.string() << "\n";
  std::optional<FileLock> work_lock;
  if (!s.o.dry_run) lock_work_dir(s, work_lock, out);
  Resolvers resolvers(s, runner);
  Resolved r = resolve_rows(s, resolvers, out);
  plan::CompileGraph graph = plan_rows(s, r, out);
  if (s.o.dry_run) return print_plan(s, r, graph, out);
  if (s.o.kernels_only)
    build_kernel_objects(s, r, graph, resolvers.build_runner(), out);
  else
    run_pipeline(s, r, graph, resolvers, runner, out);
  return report(s, out);
}

}  // namespace sb::rows
