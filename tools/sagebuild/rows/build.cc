#include "sagebuild/rows/build.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <regex>
#include <thread>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/common/os.h"
#include "sagebuild/common/text.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/pipeline.h"
#include "sagebuild/rows/summary.h"
#include "sagebuild/toolchain/cache.h"
#include "sagebuild/toolchain/cuda.h"
#include "sagebuild/toolchain/host.h"
#include "sagebuild/toolchain/msvc_resolver.h"
#include "sagebuild/toolchain/provision.h"
#include "sagebuild/toolchain/torch_env.h"

namespace sb::rows {

namespace fs = std::filesystem;
using toolchain::RowResolver;

bool is_our_tree(const fs::path& dir) {
  return fs::exists(dir / "matrix/build-matrix.yaml") && fs::exists(dir / "kernels");
}

fs::path find_source_dir(const fs::path& start) {
  fs::path p = fs::absolute(start);
  for (fs::path d = p; !d.empty(); d = d.parent_path()) {
    if (is_our_tree(d)) return d;
    if (d == d.parent_path()) break;
  }
  throw UsageError("cannot find the SageAttention source tree above " + p.string() +
                   " (expected matrix/build-matrix.yaml and kernels/): run from the repository or pass --source-dir");
}

std::vector<std::string> resolve_launcher(const std::string& launcher, const std::string& path_env) {
  if (launcher == "none") return {};
  if (launcher == "auto") {
    for (const char* n : {"sccache", "ccache"})
      if (auto p = run::find_program(n, path_env)) return {p->string()};
    return {};
  }
  if (launcher == "ccache" || launcher == "sccache") {
    auto p = run::find_program(launcher, path_env);
    if (!p)
      throw UsageError("--launcher " + launcher + ": " + launcher +
                       " is not on PATH; install it or use --launcher none");
    return {p->string()};
  }
  throw UsageError("--launcher: \"" + launcher + "\" is not one of ccache, sccache, none, auto");
}

matrix::Row row_for_environment(const matrix::Matrix& m, const toolchain::PythonInfo& py, const std::string& platform) {
  const std::string who = "--for-python " + py.executable.string();
  if (!py.torch)
    throw UsageError(who +
                     ": no torch is importable there; install the CUDA build of torch you want the extension "
                     "for into that environment first (pip install torch), and build without pip's build "
                     "isolation (pip install --no-build-isolation .) so that the build sees it");
  const std::string release = py.torch->version.substr(0, py.torch->version.find('+'));
  if (py.torch->cuda.empty())
    throw UsageError(who + ": torch " + py.torch->version +
                     " there is a CPU-only build; install a CUDA build of torch (e.g. pip install torch "
                     "--index-url https://download.pytorch.org/whl/cu130), then build again");
  std::vector<std::string> near;  // what the matrix builds of this torch release here
  for (const auto& r : m.rows) {
    if (r.source != matrix::kOurSource || r.platform != platform || r.torch != release) continue;
    if (r.cuda != py.torch->cuda) {
      near.push_back("CUDA " + r.cuda);
      continue;
    }
    if (std::find(r.pythons.begin(), r.pythons.end(), py.version()) != r.pythons.end()) return r;
    near.push_back("Python " + r.requires_python);
  }
  std::sort(near.begin(), near.end());
  near.erase(std::unique(near.begin(), near.end()), near.end());
  std::string known;
  for (const auto& n : near) known += (known.empty() ? "" : ", ") + n;
  throw UsageError(who + ": " + m.path.string() + " builds no " + platform + " row for Python " + py.version() +
                   " with torch " + release + " for CUDA " + py.torch->cuda +
                   (known.empty() ? " (no row of torch " + release +
                                        " at all; `sagebuild matrix --profile sage2-all` "
                                        "lists the combinations)"
                                  : " (torch " + release + " rows here: " + known + ")") +
                   "; install a torch the matrix builds, or add the combination to the matrix");
}

std::vector<std::string> environment_archs(const char* list, const std::vector<std::string>& gpu_caps,
                                           std::string& origin) {
  std::vector<std::string> archs;
  if (list && *list) {
    origin = std::string("TORCH_CUDA_ARCH_LIST=\"") + list + "\"";
    std::string cur;
    for (char c : std::string(list) + ";") {
      if (c == ';' || c == ' ' || c == ',') {
        if (cur.size() > 4 && cur.compare(cur.size() - 4, 4, "+PTX") == 0) cur.resize(cur.size() - 4);
        if (!cur.empty()) archs.push_back(parse_arch_arg(cur, "TORCH_CUDA_ARCH_LIST").name());
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (archs.empty()) throw UsageError(origin + ": no arch in it; expected e.g. \"8.0;9.0\"");
    return archs;
  }
  for (const auto& cap : gpu_caps) archs.push_back(parse_arch_arg(cap, "nvidia-smi's compute_cap").name());
  if (!archs.empty()) origin = "the GPU(s) nvidia-smi reports";
  return archs;
}

namespace {

// The compute capabilities nvidia-smi reports ("9.0"), or none.
std::vector<std::string> gpu_compute_caps(run::ProcessRunner& runner, const std::string& path_env) {
  auto smi = run::find_program("nvidia-smi", path_env);
  if (!smi) return {};
  run::Result r = runner.run(run::Command({smi->string(), "--query-gpu=compute_cap", "--format=csv,noheader"}));
  if (!r.ok()) return {};
  std::vector<std::string> caps;
  std::string line;
  for (char c : r.out + "\n") {
    if (c == '\n' || c == '\r') {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      if (!line.empty() && std::find(caps.begin(), caps.end(), line) == caps.end()) caps.push_back(line);
      line.clear();
    } else if (c != ' ' || !line.empty()) {
      line += c;
    }
  }
  return caps;
}

// One invocation: its options, its rows, where it works, and each row's
// result so far (a row that failed keeps its first failure).
struct Session {
  BuildOptions o;
  std::vector<matrix::Row> rows;
  std::string name;  // profile or row id, for the work dir and the summary
  fs::path source;   // the checkout built (--source-dir): ours, or an upstream tree
  fs::path sources;  // the source manifests: matrix/sources/ beside the matrix
  fs::path work;
  std::vector<RowResult> results;
  std::map<std::string, plan::KernelManifest> manifests;
  // The upstream kinds the checkout is (every manifest whose markers it
  // has, or the one --source-kind names), read once; empty for our tree.
  std::map<std::string, plan::SourceManifest> tree_kinds;
  std::string tree_description;  // "this repository's tree", "an upstream-sageattention tree", for messages

  void fail(std::size_t i, const std::string& stage, const std::string& why) {
    results[i].ok = false;
    results[i].stage = stage;
    results[i].error = why;
  }
  bool stopped() const {
    return !o.keep_going &&
           std::any_of(results.begin(), results.end(), [](const RowResult& r) { return !r.ok && !r.stage.empty(); });
  }
};

void prepare_options(BuildOptions& o) {
  if (o.jobs < 0) throw UsageError("--jobs: expected a positive number, got " + std::to_string(o.jobs));
  if (o.jobs == 0) o.jobs = std::max(1u, std::thread::hardware_concurrency());
  if (o.nvcc_threads < 0)
    throw UsageError("--nvcc-threads: expected a positive number, got " + std::to_string(o.nvcc_threads));
  if (o.nvcc_threads == 0) o.nvcc_threads = o.jobs;
  if (o.cache_dir.empty()) o.cache_dir = toolchain::default_cache_dir();
  o.cache_dir = fs::absolute(o.cache_dir);
  check_output_dir(o.out_dir, "--out");
  // Paths that reach build.ninja: a line break refused here, before any work.
  check_no_line_break(o.cache_dir, "--cache-dir");
  check_no_line_break(o.build_dir, "--build-dir");
  check_no_line_break(o.source_dir, "--source-dir");
  // --json records the wheels' paths, and JSON is UTF-8.
  if (!o.json_path.empty())
    for (const auto& [path, option] :
         {std::pair{o.out_dir, "--out"}, std::pair{o.json_path, "--json"}, std::pair{o.source_dir, "--source-dir"}})
      if (!is_valid_utf8(path.string()))
        throw UsageError(std::string(option) + " " + printable(path.string()) +
                         ": the name is not UTF-8, and --json writes it into JSON (UTF-8); expected a path "
                         "whose name is UTF-8");
  o.out_dir = fs::absolute(o.out_dir);
  o.toolchain.cache_dir = o.cache_dir;
  if (o.toolchain.path_env.empty()) o.toolchain.path_env = toolchain::path_env();
  if (!o.toolchain.cuda_home_env)
    if (const char* c = std::getenv("CUDA_HOME"); c && *c) o.toolchain.cuda_home_env = fs::path(c);
  if (o.dry_run) {
    o.toolchain.provision = false;
    o.toolchain.plan_only = true;
  }
}

const matrix::Row& row_by_id(const matrix::Matrix& m, const std::string& id, const fs::path& matrix_path) {
  if (const matrix::Row* r = matrix::find_row(m, id)) return *r;
  std::string some;
  for (std::size_t n = 0; n < m.rows.size() && n < 5; ++n) some += "\n  " + m.rows[n].id;
  throw UsageError("--row " + id + ": no such row in " + matrix_path.string() + "; rows look like:" + some +
                   "\n  (`sagebuild matrix` lists them all)");
}

// What the checkout is: ours, or the upstream kinds whose manifests'
// markers it has (--source-kind: that one, which it must match).
void recognise_tree(Session& s) {
  bool ours = is_our_tree(s.source);
  if (ours && s.o.source_kind.empty()) {
    s.tree_description = "this repository's own tree";
    return;
  }
  std::vector<fs::path> files;
  if (!s.o.source_kind.empty()) {
    files.push_back(s.sources / (s.o.source_kind + ".yaml"));
    if (!fs::exists(files.front()))
      throw UsageError("--source-kind " + s.o.source_kind + ": no source manifest " + files.front().string() +
                       "; the kinds are the file names in " + s.sources.string());
  } else if (fs::is_directory(s.sources)) {
    for (const auto& e : fs::directory_iterator(s.sources))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
  }
  std::string tried;
  for (const auto& f : files) {
    plan::SourceManifest m = plan::load_source_manifest(f);
    auto missing = plan::missing_markers(m, s.source);
    if (missing.empty()) {
      s.tree_description += (s.tree_description.empty() ? "" : ", ") + m.kind;
      s.tree_kinds.emplace(m.kind, std::move(m));
    } else {
      tried += "\n  " + m.kind + " (" + f.string() + "): lacks " + missing.front();
    }
  }
  if (s.tree_kinds.empty())
    throw UsageError("--source-dir " + s.source.string() +
                     " is neither this repository's tree (matrix/build-matrix.yaml and kernels/) nor a tree a "
                     "source manifest describes:" +
                     (tried.empty() ? "\n  (no manifests in " + s.sources.string() + ")" : tried) +
                     "\n  fix: pass the top of the checkout, or --source-kind KIND to say which manifest to use");
  s.tree_description = "a tree of kind " + s.tree_description;
}

void check_archs(Session& s, const matrix::Matrix& m, const matrix::Row& row, const std::vector<Arch>& archs);

void select_rows(Session& s, run::ProcessRunner& runner, std::ostream& out) {
  const BuildOptions& o = s.o;
  s.source = o.source_dir.empty() ? find_source_dir(fs::current_path()) : fs::absolute(o.source_dir);
  // An upstream checkout has no matrix: it comes from this repository, found
  // upward from here (or --matrix).
  fs::path repo = is_our_tree(s.source) || !o.matrix_path.empty() ? s.source : find_source_dir(fs::current_path());
  fs::path matrix_path = o.matrix_path.empty() ? repo / "matrix/build-matrix.yaml" : fs::absolute(o.matrix_path);
  s.sources = matrix_path.parent_path() / "sources";
  recognise_tree(s);
  matrix::Matrix m = matrix::load_matrix(matrix_path);
  for (const auto& id : o.rows) s.rows.push_back(row_by_id(m, id, matrix_path));
  if (!o.for_python.empty()) {
    if (!o.rows.empty()) throw UsageError("--for-python chooses the row itself; pass it without --row");
    toolchain::PythonInfo py = toolchain::query_python(runner, o.for_python);
    s.rows.push_back(row_for_environment(m, py, toolchain::host_platform_tag()));
    std::string origin = "the package's";
    if (s.o.archs.empty())
      s.o.archs = environment_archs(std::getenv("TORCH_CUDA_ARCH_LIST"), gpu_compute_caps(runner, o.toolchain.path_env),
                                    origin);
    else
      origin = "--archs";
    out << "sagebuild: for " << o.for_python.string() << " (Python " << py.version() << ", torch " << py.torch->version
        << "): row " << s.rows.back().id << ", archs from " << origin << "\n";
  } else if (o.rows.empty()) {
    s.rows = matrix::expand(m, o.profile).rows;
  }
  s.name = !o.for_python.empty() ? s.rows.front().id
           : o.rows.empty()      ? o.profile
           : o.rows.size() == 1  ? o.rows.front()
                                 : "rows-" + hex(sha256(o.rows.front())).substr(0, 8);
  if (!s.o.archs.empty()) {
    std::vector<Arch> archs;
    for (const auto& a : s.o.archs) archs.push_back(parse_arch_arg(a, "--archs"));
    std::sort(archs.begin(), archs.end());
    archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
    for (auto& r : s.rows) {
      check_archs(s, m, r, archs);
      r.archs = archs;
      r.ptx_arch = ptx_arch(archs);
    }
  }
}

Session open_session(BuildOptions o, run::ProcessRunner& runner, std::ostream& out) {
  if (!o.for_python.empty()) {
    o.for_python = fs::absolute(o.for_python);
    o.toolchain.python = o.for_python;
  }
  prepare_options(o);
  Session s;
  s.o = std::move(o);
  select_rows(s, runner, out);
  s.work = s.o.build_dir.empty() ? s.o.cache_dir / "work" / safe_dir_name(s.name) : fs::absolute(s.o.build_dir);
  s.results.resize(s.rows.size());
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const matrix::Row& row = s.rows[i];
    s.results[i].row_id = row.id;
    s.results[i].torch = row.torch;
    s.results[i].cuda = row.cuda;
    s.results[i].python =
        row.pythons.size() == 1 ? row.pythons.front() : row.pythons.front() + "-" + row.pythons.back();
    s.results[i].platform = row.platform;
    for (const auto& a : s.rows[i].archs) s.results[i].archs.push_back(a.name());
  }
  return s;
}

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

// build_info.json names, per family, what verify looks for in the kernels'
// SASS: refuse before compiling rather than after.
const plan::KernelManifest& manifest_of(Session& s, const matrix::Row& row) {
  if (!s.tree_kinds.empty() || !is_our_tree(s.source))
    throw UsageError("row " + row.id +
                     " is built from this repository's own tree (kernels/families.json), and "
                     "--source-dir " +
                     s.source.string() + " is " + s.tree_description + "; build it from this repository's checkout");
  auto it = s.manifests.find(row.kernels_manifest);
  if (it == s.manifests.end())
    it = s.manifests.emplace(row.kernels_manifest, plan::load_kernel_manifest(s.source / row.kernels_manifest)).first;
  std::string missing;
  for (const auto& f : it->second.families)
    if (f.symbol_marker.empty()) missing += (missing.empty() ? "" : ", ") + ("families." + f.name + ".symbol_marker");
  if (!missing.empty())
    throw UsageError(row.kernels_manifest + ": " + missing +
                     " missing; build_info.json needs, per family, a "
                     "substring of its kernel names that verify looks for in each arch's SASS "
                     "(e.g. \"symbol_marker\": \"quant_qk_kernel\")");
  return it->second;
}

// What the families of a manifest are built for: "quant >= 8.0, sm90 9.0a".
std::string family_archs(const plan::KernelManifest& manifest) {
  std::string out;
  for (const auto& f : manifest.families) {
    out += (out.empty() ? "" : ", ") + f.name + " ";
    if (f.min_arch) {
      out += ">= " + f.min_arch->name();
      continue;
    }
    for (std::size_t i = 0; i < f.archs.size(); ++i) out += (i ? "/" : "") + f.archs[i].name();
  }
  return out;
}

// --archs, checked for each row before any work: every arch one that the
// row's CUDA compiles and that some kernel family of the row is built for,
// or the wheel would hold no kernel for it.  (Rows built from an upstream
// tree: their families are the source manifest's, checked by its planner.)
void check_archs(Session& s, const matrix::Matrix& m, const matrix::Row& row, const std::vector<Arch>& archs) {
  if (row.source == matrix::kOurSource && is_our_tree(s.source) && s.tree_kinds.empty()) {
    const plan::KernelManifest& manifest = manifest_of(s, row);
    for (const Arch& a : archs) {
      bool built = std::any_of(manifest.families.begin(), manifest.families.end(),
                               [&](const plan::KernelFamily& f) { return !plan::family_targets(f, {a}).empty(); });
      if (!built)
        throw UsageError("--archs " + a.name() + ": no kernel family is built for " + a.name() +
                         ", so the wheel would hold no kernel for it (" + row.kernels_manifest + ": " +
                         family_archs(manifest) + "); fix: pass archs the families are built for, e.g. " +
                         "--archs 8.0,9.0");
    }
  }
  const matrix::CudaRelease* cuda = matrix::find_cuda(m, row.cuda);
  if (cuda == nullptr) return;  // the matrix loader has refused such a row already
  for (const Arch& a : archs) {
    if (matrix::cuda_builds(*cuda, a)) continue;
    std::string list;
    for (const Arch& b : cuda->archs) list += (list.empty() ? "" : ", ") + b.name();
    std::string why =
        matrix::any_cuda_builds(m, a)
            ? "CUDA " + row.cuda + " does not compile it (" + a.name() + " " + matrix::cuda_requirement(m, a) + ")"
            : "no CUDA release in the matrix compiles it: it is not a GPU architecture NVIDIA ships, "
              "nor one CUDA " +
                  row.cuda + " supports";
    throw UsageError("--archs " + a.name() + ": row " + row.id + ": " + why + "; CUDA " + row.cuda + " compiles " +
                     list + "; fix: pass archs from that list");
  }
}

// The resolver of each platform's rows: this host's own, and for a dry run
// the MSVC one with placeholders for win_amd64 rows on another host.
class Resolvers {
 public:
  Resolvers(const Session& s, run::ProcessRunner& runner) : s_(s), runner_(runner) {}

  RowResolver& for_row(const matrix::Row& row) {
    std::string host = toolchain::host_platform_tag();
    if (row.platform == host) {
      if (!host_) host_ = toolchain::host_resolver(runner_, s_.o.toolchain);
      return *host_;
    }
    if (row.platform == "win_amd64" && s_.o.dry_run) {
      if (!windows_) windows_ = std::make_unique<toolchain::MsvcResolver>(runner_, s_.o.toolchain, std::nullopt);
      return *windows_;
    }
    if (row.platform == "win_amd64")
      throw UsageError("row " + row.id +
                       " is for win_amd64: building it needs a Windows host with Visual Studio "
                       "(the C++ x64 tools) and " +
                       (toolchain::cuda_provisioned_from_pypi(row.cuda, row.platform)
                            ? "pip (CUDA " + row.cuda + " comes from NVIDIA's win_amd64 wheels on PyPI)"
                            : "the CUDA " + row.cuda + " toolkit") +
                       "; this host builds " + host +
                       " rows (`--dry-run` prints the row's Windows plan here; its CI job runs on a windows runner: "
                       "`sagebuild matrix --format github` names it)");
    throw UsageError("row " + row.id + " is for " + row.platform + "; this host builds " + host +
                     " rows (run this "
                     "row's job on a " +
                     row.platform + " runner: `sagebuild matrix --format github` names it)");
  }
  // Runs ninja: the host resolver's runner (vcvars64's environment on Windows).
  run::ProcessRunner& build_runner() { return host_ ? host_->build_runner() : runner_; }

 private:
  const Session& s_;
  run::ProcessRunner& runner_;
  std::unique_ptr<RowResolver> host_, windows_;
};

// Where a row's commands run: here, or for another platform's row (a dry
// run) its placeholders.
plan::BuildSite site_for(const Session& s, const matrix::Row& row, const std::vector<std::string>& launcher) {
  if (row.platform == toolchain::host_platform_tag())
    return {s.source, s.o.cache_dir / "objects", s.o.cache_dir / "extensions", s.work, launcher};
  return {
      "<SOURCE_DIR>", fs::path("<CACHE_DIR>") / "objects", fs::path("<CACHE_DIR>") / "extensions", "<BUILD_DIR>", {}};
}

struct Resolved {
  std::vector<plan::RowInput> inputs;
  std::vector<std::size_t> row_of;  // inputs[k] is row row_of[k]
};

void print_checks(const std::vector<toolchain::Check>& checks, std::ostream& out) {
  for (const auto& c : checks)
    out << "  " << (c.ok ? "\u2713 " : "\u2717 ") << c.what << ": " << c.found << (c.ok ? "" : " (" + c.fix + ")")
        << "\n";
}

// An upstream row's manifest: the kind its package names, which the
// checkout must be.
const plan::SourceManifest& source_manifest_of(const Session& s, const matrix::Row& row) {
  auto it = s.tree_kinds.find(row.source);
  if (it == s.tree_kinds.end())
    throw UsageError("row " + row.id + " is built from an upstream tree of kind " + row.source + " (" +
                     (s.sources / (row.source + ".yaml")).string() + "), and --source-dir " + s.source.string() +
                     " is " + s.tree_description + "; pass a checkout of that tree as --source-dir");
  return it->second;
}

// A row's toolchain and what its wheel is built from.
plan::RowInput resolve_row(Session& s, RowResolver& resolver, const matrix::Row& row, std::ostream& out) {
  if (row.source == matrix::kOurSource) {
    const plan::KernelManifest& manifest = manifest_of(s, row);
    out << "[" << row.id << "] toolchain...\n" << std::flush;
    const plan::StableAbiBinding* stable = manifest.stable_binding_for(row.torch);
    auto tc = resolver.resolve(row, stable ? std::optional(stable->min_torch) : std::nullopt);
    return {row, plan::extension_from_families(manifest, row), std::move(tc), {}};
  }
  const plan::SourceManifest& manifest = source_manifest_of(s, row);
  plan::RowSpec spec = plan::extensions_from_source(manifest, row);
  out << "[" << row.id << "] toolchain...\n" << std::flush;
  auto tc = resolver.resolve(row, std::nullopt);
  for (const auto& h : spec.headers) {
    toolchain::Check check;
    tc.headers.push_back(resolver.headers(h, row, check));
    tc.checks.push_back(check);
  }
  return {row, std::move(spec), std::move(tc), {}};
}

// 1. Each row's toolchain, found or provisioned, and its extension.
Resolved resolve_rows(Session& s, Resolvers& resolvers, std::ostream& out) {
  Resolved r;
  std::vector<std::string> launcher = resolve_launcher(s.o.launcher, s.o.toolchain.path_env);
  for (std::size_t i = 0; i < s.rows.size() && !s.stopped(); ++i) {
    const auto& row = s.rows[i];
    try {
      plan::RowInput in = resolve_row(s, resolvers.for_row(row), row, out);
      print_checks(in.toolchain.checks, out);
      in.site = site_for(s, row, launcher);
      r.inputs.push_back(std::move(in));
      r.row_of.push_back(i);
    } catch (const ConfigError& e) {
      s.fail(i, "toolchain", e.what());
    } catch (const UsageError& e) {
      s.fail(i, "toolchain", e.what());
    } catch (const IoError& e) {
      s.fail(i, "toolchain", e.what());
    }
  }
  return r;
}

// 2. The compile graph of every resolved row.
plan::CompileGraph plan_rows(Session& s, const Resolved& r, std::ostream& out) {
  plan::CompileGraph g;
  if (r.inputs.empty() || s.stopped()) return g;
  try {
    plan::PlanSettings settings;
    settings.repo_root = s.source;
    settings.nvcc_threads = s.o.nvcc_threads;
    g = plan::plan_compile(r.inputs, settings);
  } catch (const UsageError& e) {
    for (auto i : r.row_of) s.fail(i, "plan", e.what());
    return {};
  }
  out << "kernels: " << g.kernels_cached << " objects cached, " << g.kernels_to_compile
      << " to compile; bindings: " << g.bindings_cached << " cached, " << g.bindings_to_compile
      << " to compile; links: " << g.links << " (" << g.links_cached << " shared extensions cached)\n";
  for (const auto& rg : g.rows) {
    out << "  " << rg.row_id << ": families " << (rg.families.empty() ? "none" : "");
    for (const auto& f : rg.families) out << f << " ";
    for (std::size_t k = 0; k < rg.skipped_families.size(); ++k)
      out << (k ? "; " : "(skipped: ") << rg.skipped_families[k].name << ", " << rg.skipped_families[k].why
          << (k + 1 == rg.skipped_families.size() ? ")" : "");
    out << "->";
    for (const auto& e : rg.extensions) out << " " << e.filename;
    out << "\n";
  }
  return g;
}

// 3a. A dry run: the commands a build would run, and what follows them.
int print_plan(const Session& s, const Resolved& r, const plan::CompileGraph& g, std::ostream& out) {
  out << "\ndry run: the commands a build would run (compile nothing)\n";
  if (std::any_of(r.inputs.begin(), r.inputs.end(), [](const plan::RowInput& in) { return in.toolchain.placeholders; }))
    out << "Windows (win_amd64) plan: cmd.exe/CreateProcess command lines, run by ninja in vcvars64.bat's environment "
           "on a Windows host;\n<...> are placeholders for what only that host can tell: <CUDA_PATH> (%CUDA_PATH%), "
           "<VCToolsInstallDir> (vswhere + vcvars64.bat), <TORCH_DIR> (the row's torch package), <PYTHON_PREFIX> (the "
           "build Python), <SOURCE_DIR>, <CACHE_DIR>, <BUILD_DIR>\n";
  for (const auto& e : g.edges) out << "# " << e.description << "\n" << e.command << "\n";
  for (std::size_t k = 0; k < g.rows.size(); ++k)
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

// --provision-torch: each row's environment (toolchain/torch_env.h), made in
// the background from the moment the rows are planned; the smoke test waits
// for its row's.
class TorchEnvs {
 public:
  TorchEnvs(const Session& s, run::ProcessRunner& runner) : s_(s), runner_(runner) {}
  void start(const plan::RowInput& in, std::ostream& out) {
    const matrix::Row& row = in.row;
    toolchain::PythonInfo base =
        toolchain::query_python_cached(runner_, toolchain::torch_env_base(s_.o.toolchain, row), s_.o.cache_dir);
    fs::path entry = toolchain::torch_env_entry(s_.o.cache_dir, row, base);
    auto it = by_entry_.find(entry);
    if (it == by_entry_.end()) {
      auto wheel = toolchain::cached_torch_wheel(s_.o.cache_dir, row, base);
      out << "[" << row.id << "] torch " << row.torch << " with its dependencies into " << entry.string()
          << (wheel ? " (from " + wheel->filename().string() + ")" : std::string()) << ", while compiling\n";
      auto opt = s_.o.toolchain;
      auto& runner = runner_;
      it = by_entry_
               .emplace(entry, std::async(std::launch::async,
                                          [&runner, opt, base, row, wheel] {
                                            return toolchain::provision_torch_env(runner, opt, base, row, wheel);
                                          })
                                   .share())
               .first;
    }
    by_row_.emplace(row.id, it->second);
  }
  std::optional<toolchain::PythonInfo> python_of(const std::string& row_id) {
    auto it = by_row_.find(row_id);
    if (it == by_row_.end()) return std::nullopt;
    return toolchain::query_python(runner_, it->second.get());  // rethrows the install's UsageError
  }

 private:
  const Session& s_;
  run::ProcessRunner& runner_;
  std::map<fs::path, std::shared_future<fs::path>> by_entry_;
  std::map<std::string, std::shared_future<fs::path>> by_row_;
};

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
  run_pipeline(s, r, graph, resolvers, runner, out);
  return report(s, out);
}

int run_doctor(BuildOptions o, run::ProcessRunner& runner, std::ostream& out) {
  o.toolchain.provision = false;
  Session s = open_session(std::move(o), runner, out);
  const auto& path = s.o.toolchain.path_env;
  // Any \u2717 line makes the exit code 1; what a build downloads itself
  // is not missing (\u2193).
  bool ok = true;
  enum class Mark { good, download, missing };
  auto line = [&](Mark mark, const std::string& what, const std::string& found, const std::string& fix) {
    const char* sign = mark == Mark::good ? "\u2713 " : mark == Mark::download ? "\u2193 " : "\u2717 ";
    out << sign << what << ": " << found << (mark != Mark::missing || fix.empty() ? "" : "\n    fix: " + fix) << "\n";
    if (mark == Mark::missing) ok = false;
  };
  auto ninja = run::find_program("ninja", path);
  line(ninja ? Mark::good : Mark::missing, "ninja", ninja ? ninja->string() : "not on PATH", "install ninja-build");
  auto launcher = resolve_launcher("auto", path);
  line(Mark::good, "compiler launcher",
       launcher.empty() ? "none (builds still work, without ccache/sccache)" : launcher.front(), "");
  line(Mark::good, "cache", s.o.cache_dir.string(), "");
  Resolvers resolvers(s, runner);
  for (const auto& row : s.rows) {
    std::string archs;
    for (const auto& a : row.archs) archs += (archs.empty() ? "" : " ") + a.name();
    out << "\n" << row.id << " (torch " << row.torch << ", CUDA " << row.cuda << ", archs " << archs << ")\n";
    std::vector<toolchain::Check> checks;
    try {
      checks = resolvers.for_row(row).diagnose(row);
    } catch (const UsageError& e) {
      checks = {{false, "host", e.what(), "run doctor on a " + row.platform + " host"}};
    }
    for (const auto& c : checks) {
      bool provisionable = !c.ok && (c.what.rfind("torch", 0) == 0 || c.what.rfind("CUDA", 0) == 0) &&
                           c.found.find("not in the cache") != std::string::npos;
      line(c.ok            ? Mark::good
           : provisionable ? Mark::download
                           : Mark::missing,
           c.what, c.found + (provisionable ? " (a build will download it)" : ""), c.fix);
    }
  }
  return ok ? 0 : 1;
}

}  // namespace sb::rows

namespace sb::rows {

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

UnitRun preprocess_unit(run::ProcessRunner& runner, const graph::Edge& e, const std::string& cuda) {
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
