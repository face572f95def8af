#include "sagebuild/rows/planning.h"

#include <algorithm>
#include <ostream>

#include "sagebuild/common/error.h"

namespace sb::rows {

plan::CompileGraph plan_rows(Session& s, const Resolved& r, std::ostream& out) {
  plan::CompileGraph g;
  if (r.inputs.empty() || s.stopped()) return g;
  plan::PlanSettings settings;
  settings.repo_root = s.source;
  settings.nvcc_threads = s.o.nvcc_threads;
  settings.share_threads = s.o.nvcc_threads_shared;
  settings.kernels_only = s.o.kernels_only;
  // --kernel-objects without --kernels-only: every kernel from there, its
  // key checked; a directory that does not serve the rows stops the build.
  plan::KernelObjects handed;
  if (!s.o.kernel_objects.empty() && !s.o.kernels_only) {
    handed = plan::load_kernel_objects(s.o.kernel_objects);
    settings.handed = &handed;
    settings.handed_dir = s.o.kernel_objects;
  }
  try {
    g = plan::plan_compile(r.inputs, settings);
  } catch (const plan::HandedObjectError&) {
    throw;
  } catch (const UsageError& e) {
    for (auto i : r.row_of) s.fail(i, "plan", e.what());
    return {};
  }
  out << "kernels: " << g.kernels_cached << " objects cached, " << g.kernels_to_compile
      << " to compile; bindings: " << g.bindings_cached << " cached, " << g.bindings_to_compile
      << " to compile; links: " << g.links << " (" << g.links_cached << " shared extensions cached)\n";
  if (settings.handed)
    out << "kernel objects: " << g.kernels_cached << " taken from " << s.o.kernel_objects.string()
        << " (--kernel-objects; keys checked, none compiled)\n";
  for (const auto& rg : g.rows) {
    out << "  " << rg.row_id << ": families " << (rg.families.empty() ? "none" : "");
    for (const auto& f : rg.families) out << f << " ";
    for (std::size_t k = 0; k < rg.skipped_families.size(); ++k)
      out << (k ? "; " : "(skipped: ") << rg.skipped_families[k].name << ", " << rg.skipped_families[k].why
          << (k + 1 == rg.skipped_families.size() ? ")" : "");
    out << "->";
    for (const auto& e : rg.extensions) out << " " << (e.filename.empty() ? "kernel objects" : e.filename);
    out << "\n";
  }
  return g;
}

int print_plan(const Session& s, const Resolved& r, const plan::CompileGraph& g, std::ostream& out) {
  out << "\ndry run: the commands a build would run (compile nothing)\n";
  if (std::any_of(r.inputs.begin(), r.inputs.end(), [](const plan::RowInput& in) { return in.toolchain.placeholders; }))
    out << "Windows (win_amd64) plan: cmd.exe/CreateProcess command lines, run by ninja in vcvars64.bat's environment "
           "on a Windows host;\n<...> are placeholders for what only that host can tell: <CUDA_PATH> (%CUDA_PATH%), "
           "<VCToolsInstallDir> (vswhere + vcvars64.bat), <TORCH_DIR> (the row's torch package), <PYTHON_PREFIX> (the "
           "build Python), <SOURCE_DIR>, <CACHE_DIR>, <BUILD_DIR>\n";
  for (const auto& e : g.edges) out << "# " << e.description << "\n" << e.command << "\n";
  for (std::size_t k = 0; k < g.rows.size(); ++k)
    if (s.o.kernels_only)
      out << "# " << r.inputs[k].row.id << ": its kernel objects into " << s.o.kernel_objects.string()
          << ", listed in kernel-objects.json\n";
    else
      out << "# " << r.inputs[k].row.id << ": stage, pack " << r.inputs[k].row.wheel_filename << " into "
          << s.o.out_dir.string() << ", verify, smoke test\n";
  // What this machine lacks that a real build of a planned row needs: the
  // plan printed anyway (a dry run is not a check that the build can run).
  bool header = false;
  for (const auto& in : r.inputs)
    for (const auto& c : in.toolchain.checks) {
      if (c.ok || in.toolchain.placeholders) continue;  // another OS's row: its header above says what

      if (!header) out << "\nmissing here (the plan above assumes it; a real build needs it):\n";
      header = true;
      out << "  " << in.row.id << ": " << c.what << ": " << c.found << "\n    fix: " << c.fix << "\n";
    }
  bool any_failed = false;
  for (const auto& res : s.results)
    if (!res.stage.empty() && !res.ok) {
      any_failed = true;
      out << "\u2717 " << res.row_id << ": " << res.error << "\n";
    }
  return any_failed ? 1 : 0;
}

}  // namespace sb::rows
