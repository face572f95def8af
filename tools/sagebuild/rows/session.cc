#include "sagebuild/rows/session.h"

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <thread>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/common/text.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/plan/plan.h"
#include "sagebuild/rows/for_python.h"
#include "sagebuild/rows/pipeline.h"
#include "sagebuild/toolchain/cache.h"
#include "sagebuild/toolchain/host.h"

namespace sb::rows {

namespace fs = std::filesystem;

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

namespace {

void prepare_options(BuildOptions& o) {
  if (o.jobs < 0) throw UsageError("--jobs: expected a positive number, got " + std::to_string(o.jobs));
  if (o.jobs == 0) o.jobs = std::max(1u, std::thread::hardware_concurrency());
  if (o.nvcc_threads < 0)
    throw UsageError("--nvcc-threads: expected a positive number, got " + std::to_string(o.nvcc_threads));
  if (o.nvcc_threads == 0) {
    o.nvcc_threads = o.jobs;
    o.nvcc_threads_shared = true;
  }
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
  if (o.kernels_only && o.kernel_objects.empty())
    throw UsageError(
        "--kernels-only: expected --kernel-objects DIR too (where the kernel objects and their manifest "
        "go), e.g. --kernels-only --kernel-objects kernel-objects/");
  if (!o.kernel_objects.empty()) {
    check_no_line_break(o.kernel_objects, "--kernel-objects");
    o.kernel_objects = fs::absolute(o.kernel_objects);
  }
  if (o.kernels_only) o.toolchain.without_torch = true;  // the kernels are torch-free
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

}  // namespace

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
    s.results[i].torch = row.torch.str();
    s.results[i].cuda = row.cuda.release_str();
    s.results[i].python = row.python_span();
    s.results[i].platform = row.platform;
    for (const auto& a : s.rows[i].archs) s.results[i].archs.push_back(a.name());
  }
  return s;
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
                     "(e.g. \"symbol_marker\": \"qkv_stats_q_kernel\")");
  return it->second;
}

namespace {

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
    std::string why = matrix::any_cuda_builds(m, a)
                          ? "CUDA " + row.cuda.release_str() + " does not compile it (" + a.name() + " " +
                                matrix::cuda_requirement(m, a) + ")"
                          : "no CUDA release in the matrix compiles it: it is not a GPU architecture NVIDIA ships, "
                            "nor one CUDA " +
                                row.cuda.release_str() + " supports";
    throw UsageError("--archs " + a.name() + ": row " + row.id + ": " + why + "; CUDA " + row.cuda.release_str() +
                     " compiles " + list + "; fix: pass archs from that list");
  }
}

}  // namespace

}  // namespace sb::rows
