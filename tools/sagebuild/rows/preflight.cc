#include "sagebuild/rows/preflight.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <ostream>
#include <regex>
#include <vector>

#include "sagebuild/common/error.h"
#include "sagebuild/common/graph.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/resolve.h"
#include "sagebuild/rows/session.h"
#include "sagebuild/toolchain/provision.h"

namespace sb::rows {

namespace fs = std::filesystem;

std::optional<MissingHeader> find_missing_header(const std::string& text) {
  std::smatch m;
  // GCC, clang (and nvcc's front ends through them): "file:line:col: fatal error: h: No such file or directory".
  static const std::regex gnu(R"((^|\n)([^\n]*?):(\d+):\d+: fatal error: ([^\n:]+): No such file or directory)");
  // clang's wording: "fatal error: 'h' file not found".
  static const std::regex clang(R"((^|\n)([^\n]*?):(\d+):\d+: fatal error: '([^']+)' file not found)");
  static const std::regex msvc(R"(C1083: Cannot open include file: '([^']+)')");
  if (std::regex_search(text, m, gnu) || std::regex_search(text, m, clang))
    return MissingHeader{m[4].str(), m[2].str() + ":" + m[3].str()};
  if (std::regex_search(text, m, msvc)) return MissingHeader{m[1].str(), ""};
  return std::nullopt;
}

namespace {

// One unit's preprocessing: its edge run once, whichever rows share it.
struct UnitRun {
  bool ok = false;
  double seconds = 0;
  std::string problem;  // one line: what is missing and what provides it, or the tail of the output
};

std::string last_lines(const std::string& text, std::size_t n) {
  std::size_t pos = text.size();
  while (n-- > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

UnitRun preprocess_unit(run::ProcessRunner& runner, const graph::Edge& e, const matrix::CudaVersion& cuda) {
  UnitRun u;
  std::error_code ec;
  fs::create_directories(e.temp.parent_path(), ec);
  auto t0 = std::chrono::steady_clock::now();
  run::Result r = runner.run(run::Command(e.argv));
  u.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fs::remove(e.temp, ec);  // the preprocessed text: only its success matters
  u.ok = r.ok();
  if (u.ok) return u;
  std::string output = r.out + r.err;
  if (auto missing = find_missing_header(output)) {
    std::string provider = toolchain::header_provider(missing->header, cuda);
    u.problem = missing->header + ": no such file" +
                (missing->included_from.empty() ? "" : " (included from " + missing->included_from + ")") + "; " +
                (provider.empty() ? "no package sagebuild knows provides it" : provider);
  } else {
    u.problem = "the preprocessor failed (exit " + std::to_string(r.exit_code) + "): " + last_lines(output, 6);
  }
  return u;
}

}  // namespace

int run_preflight(BuildOptions o, run::ProcessRunner& runner, std::ostream& out) {
  o.dry_run = false;
  o.toolchain.provision = true;
  o.toolchain.plan_only = false;
  Session s = open_session(std::move(o), runner, out);
  out << "sagebuild doctor --preprocess: " << s.rows.size() << " row(s) of " << s.name << "; cache "
      << s.o.cache_dir.string() << "\n";
  Resolvers resolvers(s, runner);
  s.o.keep_going = true;  // every row's verdict, not only the first failure's
  Resolved r = resolve_rows(s, resolvers, out);
  for (auto& in : r.inputs) in.site.launcher.clear();  // the preprocessor itself, never a cache
  plan::CompileGraph g;
  std::string plan_error;
  if (!r.inputs.empty()) {
    try {
      plan::PlanSettings settings;
      settings.repo_root = s.source;
      settings.nvcc_threads = s.o.nvcc_threads;
      settings.share_threads = s.o.nvcc_threads_shared;
      settings.preprocess = true;
      g = plan::plan_compile(r.inputs, settings);
    } catch (const UsageError& e) {
      plan_error = e.what();
    }
  }
  std::map<fs::path, const graph::Edge*> edge_of;
  for (const auto& e : g.edges) edge_of[e.output] = &e;
  std::map<fs::path, UnitRun> runs;
  // Per row: each unit's verdict, the row's summary line.
  std::vector<std::string> summary;
  bool all_ok = true;
  std::size_t k = 0;
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const matrix::Row& row = s.rows[i];
    if (!s.results[i].ok && !s.results[i].stage.empty()) {  // the toolchain failed
      all_ok = false;
      out << "\u2717 " << row.id << ": " << s.results[i].error << "\n";
      summary.push_back("\u2717 " + row.id +
                        ": toolchain: " + s.results[i].error.substr(0, s.results[i].error.find('\n')));
      continue;
    }
    if (k >= r.inputs.size() || r.row_of[k] != i) continue;
    const plan::RowInput& in = r.inputs[k++];
    if (!plan_error.empty()) {
      all_ok = false;
      summary.push_back("\u2717 " + row.id + ": plan: " + plan_error);
      continue;
    }
    const plan::RowGraph* rg = nullptr;
    for (const auto& x : g.rows)
      if (x.row_id == row.id) rg = &x;
    int units = 0, failed = 0;
    std::vector<std::string> missing;
    out << "[" << row.id << "] preprocessing (" << in.toolchain.host->identity() << ")\n";
    for (const auto& ext : rg ? rg->extensions : std::vector<plan::PlannedExtension>{}) {
      std::vector<plan::PlannedObject> objs = ext.kernels;
      objs.insert(objs.end(), ext.bindings.begin(), ext.bindings.end());
      for (const auto& obj : objs) {
        fs::path output = in.site.work / "preprocess" / (obj.key + ".ii");
        auto e = edge_of.find(output);
        if (e == edge_of.end()) continue;
        auto it = runs.find(output);
        if (it == runs.end())
          it = runs.emplace(output, preprocess_unit(resolvers.build_runner(), *e->second, row.cuda)).first;
        const UnitRun& u = it->second;
        ++units;
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f s", u.seconds);
        out << "  " << (u.ok ? "\u2713 " : "\u2717 ") << e->second->description << " (" << secs << ")";
        if (!u.ok) {
          ++failed;
          out << "\n      " << u.problem << " (unit " << obj.source.generic_string() << ")";
          std::string h = u.problem.substr(0, u.problem.find(':'));
          if (u.problem.find(": no such file") != std::string::npos &&
              std::find(missing.begin(), missing.end(), h) == missing.end())
            missing.push_back(h);
        }
        out << "\n";
      }
    }
    if (units == 0) {
      all_ok = false;
      summary.push_back("\u2717 " + row.id + ": no compile unit to preprocess");
    } else if (failed == 0) {
      summary.push_back("\u2713 " + row.id + ": " + std::to_string(units) + " unit(s) preprocessed (" +
                        in.toolchain.host->identity() + ")");
    } else {
      all_ok = false;
      std::string names;
      for (const auto& h : missing) names += (names.empty() ? "" : ", ") + h;
      summary.push_back("\u2717 " + row.id + ": " + std::to_string(failed) + " of " + std::to_string(units) +
                        " unit(s) fail" + (names.empty() ? "" : "; missing " + names));
    }
  }
  out << "\nsummary:\n";
  for (const auto& line : summary) out << "  " << line << "\n";
  return all_ok ? 0 : 1;
}

}  // namespace sb::rows
