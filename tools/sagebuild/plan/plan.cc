#include "sagebuild/plan/plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "sagebuild/common/error.h"
#include "sagebuild/common/hash.h"

namespace sb::plan {

namespace fs = std::filesystem;
using toolchain::CompileJob;
using toolchain::HostToolchain;
using toolchain::SourceKind;

namespace {

std::string short_hash(const std::string& s) { return hex(sha256(s)).substr(0, 12); }

std::string arch_list(const std::vector<Arch>& archs) {
  std::string s;
  for (const auto& a : archs) s += (s.empty() ? "" : " ") + a.name();
  return s;
}

// The flags as they enter an object key: what they mean, not how a
// toolchain spells them (its identity() covers that).
std::vector<std::string> key_flags(const CompileFlags& f) {
  std::vector<std::string> k = {f.standard == toolchain::CxxStandard::cxx20 ? "std=c++20" : "std=c++17"};
  for (const auto& d : f.device_flags) k.push_back("device:" + d);
  for (const auto& h : f.host_flags) k.push_back("host:" + h);
  for (const auto& d : f.defines) k.push_back("define:" + d);
  return k;
}

CompileJob job_for(SourceKind kind, const RowInput& in, const fs::path& source, const CompileFlags& flags) {
  CompileJob job;
  job.kind = kind;
  job.source = in.site.source / source;
  job.standard = flags.standard;
  for (const auto& d : in.spec.include_dirs) job.include_dirs.push_back(in.site.source / d);
  for (const auto& h : in.toolchain.headers)
    job.include_dirs.insert(job.include_dirs.end(), h.include_dirs.begin(), h.include_dirs.end());
  job.defines = flags.defines;
  job.device_flags = flags.device_flags;
  job.host_flags = flags.host_flags;
  job.flags_origin = in.spec.origin;
  // Objects are shared between checkouts (their keys are relative to the
  // source tree): none may name the one that compiled it.
  job.unrecorded_prefixes = {in.site.source};
  return job;
}

// A unit that includes torch's C++ API compiles against torch's, CUDA's and
// Python's headers, with the torch build's libstdc++ ABI.
void add_torch_headers(CompileJob& job, const toolchain::RowToolchain& tc) {
  job.system_include_dirs = {tc.torch.root / "include",
                             tc.torch.root / "include" / "torch" / "csrc" / "api" / "include", tc.cuda_include,
                             tc.python_include};
  job.cxx11_abi = tc.torch.cxx11_abi;
  // Nor the torch: its headers' paths (STD_TORCH_CHECK's __FILE__) are
  // recorded from its site-packages on, "torch/include/...".
  job.unrecorded_prefixes.push_back(tc.torch.root.parent_path());
}

// What such an object depends on outside the checkout besides the compiler.
std::string torch_identity(const toolchain::RowToolchain& tc, const std::optional<std::string>& stable_abi_target) {
  std::string torch_id =
      stable_abi_target ? "torch stable-abi target " + *stable_abi_target : "torch " + tc.torch.version;
  std::string extra = torch_id + " cxx11=" + (tc.torch.cxx11_abi ? "1" : "0") + " cuda " + tc.nvcc_version +
                      " python-headers " + tc.python_version;
  for (const auto& h : tc.headers) extra += " headers " + h.requirement;
  return extra;
}

class Planner {
 public:
  explicit Planner(const PlanSettings& st) : st_(st) {
    exists_ = st.exists ? st.exists : [](const fs::path& p) { return fs::exists(p); };
  }

  void add_row(const RowInput& in) {
    RowGraph rg;
    rg.row_id = in.row.id;
    for (const auto& f : in.spec.families) rg.families.push_back(f.name);
    rg.skipped_families = in.spec.skipped_families;
    for (const auto& ext : in.spec.extensions) {
      PlannedExtension pe;
      pe.module = ext.module;
      for (const auto& unit : ext.kernels) pe.kernels.push_back(add_kernel(in, unit));
      if (st_.kernels_only) {  // no binding, no link: the kernel objects are the row's outputs
        rg.extensions.push_back(std::move(pe));
        continue;
      }
      for (const auto& b : ext.bindings) pe.bindings.push_back(add_binding(in, b));
      pe.stable_abi_target = ext.stable_abi_target();
      add_link(in, ext, pe);
      rg.extensions.push_back(std::move(pe));
    }
    g_.rows.push_back(std::move(rg));
  }

  CompileGraph finish() {
    // The kernel units to compile are known now (the cache decided): their
    // commands get the threads each nvcc may use.
    const int threads = nvcc_arch_threads();
    for (auto& k : kernels_) {
      graph::Edge& e = g_.edges[k.edge];
      k.job.device_threads = threads;
      set_command(e, *k.in, k.job);
      // nvcc --threads compiles up to that many of its archs side by side.
      e.peak_memory_gib =
          k.unit->peak_memory_gib_per_arch *
          static_cast<double>(std::max<std::size_t>(
              1, std::min<std::size_t>(static_cast<std::size_t>(std::max(1, threads)), k.unit->gencode.size())));
    }
    for (auto* group : {&bindings_, &links_})
      for (auto& e : *group) g_.edges.push_back(std::move(e));
    return std::move(g_);
  }

 private:
  std::vector<fs::path> key_include_dirs(const RowInput& in) const {
    std::vector<fs::path> dirs;
    for (const auto& d : in.spec.include_dirs) dirs.push_back(st_.repo_root / d);
    return dirs;
  }

  // The threads each kernel unit's nvcc may use (--threads, at most its archs):
  // nvcc_threads, or with share_threads that many shared among the units the
  // build compiles.
  int nvcc_arch_threads() const {
    if (!st_.share_threads || st_.nvcc_threads <= 1) return st_.nvcc_threads;
    return std::max(1, st_.nvcc_threads / std::clamp(g_.kernels_to_compile, 1, st_.nvcc_threads));
  }

  void set_command(graph::Edge& e, const RowInput& in, const CompileJob& job) const {
    const HostToolchain& tc = *in.toolchain.host;
    e.argv = in.site.launcher;
    for (auto& a : tc.compile_command(job)) e.argv.push_back(std::move(a));
    e.command = tc.run_then_move(e.argv, e.temp, e.output);
  }

  // The object of `job` under its key, with an edge unless the cache has it
  // or another row of this build already planned it.  A kernel unit's edge
  // (`unit`) gets its command in finish().
  PlannedObject object(const RowInput& in, CompileJob job, const std::string& family, const std::string& key,
                       const std::string& description, std::vector<graph::Edge>& edges, int& cached, int& to_compile,
                       const KernelUnit* unit = nullptr) {
    const HostToolchain& tc = *in.toolchain.host;
    PlannedObject obj{family, job.source, key, in.site.objects / (key + tc.object_suffix()), false};
    if (planned_.count(obj.object)) {
      obj.cached = cached_[obj.object];
      return obj;
    }
    planned_.insert(obj.object);
    obj.cached = cached_[obj.object] = !st_.preprocess && exists_(obj.object);
    (obj.cached ? cached : to_compile)++;
    if (obj.cached) return obj;
    graph::Edge e;
    e.output = obj.object;
    e.temp = in.site.objects / ("." + key + "." + short_hash(in.site.work.string()) + ".tmp" + tc.object_suffix());
    if (st_.preprocess) {
      e.output = in.site.work / "preprocess" / (key + ".ii");
      e.temp = in.site.work / "preprocess" / ("." + key + ".tmp.ii");
      job.preprocess_only = true;
    }
    e.inputs = {job.source};
    job.object = e.temp;
    e.description = description;
    if (unit)
      kernels_.push_back({edges.size(), &in, unit, std::move(job)});
    else
      set_command(e, in, job);
    edges.push_back(std::move(e));
    return obj;
  }

  PlannedObject add_kernel(const RowInput& in, const KernelUnit& unit) {
    CompileFlags unit_flags = unit.flags;
    // A unit of one arch has nothing to compile side by side: its optimiser
    // and ptxas work is split instead.  The split's count changes the cubin's
    // layout (not its SASS), so it is a constant, the same on every machine,
    // and a flag like any other: in the key.
    if (st_.nvcc_threads > 1 && unit.gencode.size() == 1)
      unit_flags.device_flags.push_back("--split-compile=" + std::to_string(kSplitCompile));
    CompileJob job = job_for(SourceKind::cuda, in, unit.source, unit_flags);
    job.gencode = unit.gencode;
    if (unit.torch_headers) add_torch_headers(job, in.toolchain);
    std::vector<std::string> flags = key_flags(unit_flags);
    flags.insert(flags.end(), unit.gencode.begin(), unit.gencode.end());
    std::string extra = unit.torch_headers ? torch_identity(in.toolchain, std::nullopt) : "";
    std::string key = object_key(ObjectKeyInput{st_.repo_root / unit.source, st_.repo_root, key_include_dirs(in),
                                                in.toolchain.host->identity(), flags, extra},
                                 st_.read);
    if (st_.kernels_only && unit.torch_headers)
      throw UsageError("row " + in.row.id + ": kernel unit " + unit.source.generic_string() +
                       " includes torch's headers, so its object is per torch build, not torch-free; "
                       "--kernels-only hands over torch-free kernels only (this repository's rows): build this "
                       "row without --kernels-only");
    if (st_.handed) return handed_kernel(in, unit, job.source, key);
    return object(in, job, unit.family, key,
                  "nvcc " + unit.family + " " + unit.source.generic_string() + " [" + arch_list(unit.targets) + "]",
                  g_.edges, g_.kernels_cached, g_.kernels_to_compile, &unit);
  }

  // A kernel object from --kernel-objects DIR, its key checked: never an edge.
  PlannedObject handed_kernel(const RowInput& in, const KernelUnit& unit, const fs::path& source,
                              const std::string& key) {
    WantedObject w{unit.family, unit.source.generic_string(), {}, key, in.row.id};
    for (const auto& a : unit.targets) w.targets.push_back(a.name());
    fs::path path = handed_object(*st_.handed, st_.handed_dir, w, st_.read);
    if (planned_.insert(path).second) {
      cached_[path] = true;
      g_.kernels_cached++;
    }
    return PlannedObject{unit.family, source, key, path, true};
  }

  // The binding compiles against torch's and Python's headers, which are
  // outside the repository: their identity (the torch build, or for the
  // stable ABI its target version, and the Python version) is in the key.
  // The stable headers of any release >= the target compile it for every
  // release >= the target, so the first one compiled serves all of them.
  PlannedObject add_binding(const RowInput& in, const BindingUnit& b) {
    const auto& tc = in.toolchain;
    CompileJob job = job_for(SourceKind::cxx, in, b.source, b.flags);
    add_torch_headers(job, tc);
    std::string extra = torch_identity(tc, b.stable_abi_target);
    std::string key = object_key(ObjectKeyInput{st_.repo_root / b.source, st_.repo_root, key_include_dirs(in),
                                                tc.host->identity(), key_flags(b.flags), extra},
                                 st_.read);
    std::string what = b.stable_abi_target
                           ? "stable ABI " + *b.stable_abi_target + ", headers of torch " + tc.torch.version
                           : "torch " + tc.torch.version;
    return object(in, job, "binding", key, "c++ binding " + b.source.generic_string() + " [" + what + "]", bindings_,
                  g_.bindings_cached, g_.bindings_to_compile);
  }

  // Where the extension goes: per row, or for a stable-ABI binding a shared
  // one keyed by everything the link reads but torch (the objects, whose keys
  // cover sources, compilers and flags; the libraries; the file name).
  fs::path extension_path(const RowInput& in, const ExtensionSpec& ext, const PlannedExtension& pe) const {
    if (!pe.stable_abi_target) return in.site.work / "rows" / in.row.id / pe.filename;
    Sha256 h;
    auto field = [&](std::string_view s) {
      h.update(std::to_string(s.size()) + ":");
      h.update(s);
    };
    field("sagebuild-stable-extension-v3");  // v3: linked without local symbols
    field(pe.filename);
    field(in.toolchain.host->identity());
    for (const auto& k : pe.kernels) field(k.key);
    for (const auto& b : pe.bindings) field(b.key);
    for (const auto& lib : ext.torch_libs) field(lib);
    field(ext.cudart_static ? "cudart static" : "cudart shared");
    for (const auto& lib : ext.libraries) field("lib " + lib);
    return in.site.extensions / hex(h.finish()) / pe.filename;
  }

  void add_link(const RowInput& in, const ExtensionSpec& ext, PlannedExtension& pe) {
    const auto& tc = in.toolchain;
    toolchain::LinkJob job;
    job.abi = in.row.abi_mode;
    job.python = in.row.build_python;
    pe.filename = tc.host->extension_filename(ext.module.substr(ext.module.rfind('.') + 1), job.abi, job.python);
    pe.path = extension_path(in, ext, pe);
    if (st_.preprocess) return;              // nothing is compiled to link
    if (!planned_.insert(pe.path).second) {  // another row of this build links it
      pe.cached = cached_[pe.path];
      return;
    }
    pe.cached = cached_[pe.path] = pe.stable_abi_target && exists_(pe.path);
    (pe.cached ? g_.links_cached : g_.links)++;
    if (pe.cached) return;
    for (const auto& k : pe.kernels) job.objects.push_back(k.object);
    for (const auto& b : pe.bindings) job.objects.push_back(b.object);
    job.torch_lib_dir = tc.torch.root / "lib";
    job.torch_libs = ext.torch_libs;
    job.cuda_lib_dir = tc.cuda_lib;
    job.cudart_static = ext.cudart_static;
    job.python_lib_dir = tc.python_lib_dir;
    job.libraries = ext.libraries;
    // The driver (libcuda) is the GPU machine's: linked through CUDA's stub.
    if (!ext.libraries.empty() && !tc.cuda_stubs.empty()) job.library_dirs.push_back(tc.cuda_stubs);
    graph::Edge e;
    e.output = pe.path;
    e.temp = pe.path.parent_path() / ("." + pe.filename + "." + short_hash(in.site.work.string()) + ".tmp");
    e.inputs = job.objects;
    job.output = e.temp;
    e.argv = tc.host->link_command(job);
    e.command = tc.host->run_then_move(e.argv, e.temp, e.output);
    e.description = pe.stable_abi_target ? "link " + pe.filename + " (stable ABI " + *pe.stable_abi_target +
                                               ", shared by torch >= " + ext.bindings.front().stable_abi_min_torch + ")"
                                         : "link " + in.row.id + "/" + pe.filename;
    links_.push_back(std::move(e));
  }

  const PlanSettings& st_;
  // Kernel edges (in g_.edges) whose commands finish() writes.
  struct PendingKernel {
    std::size_t edge;
    const RowInput* in;
    const KernelUnit* unit;
    CompileJob job;
  };
  std::vector<PendingKernel> kernels_;
  std::function<bool(const fs::path&)> exists_;
  std::set<fs::path> planned_;       // outputs that already have an edge (or are cached)
  std::map<fs::path, bool> cached_;  // whether each of them was in the cache
  std::vector<graph::Edge> bindings_, links_;
  CompileGraph g_;
};

}  // namespace

CompileGraph plan_compile(const std::vector<RowInput>& rows, const PlanSettings& settings) {
  Planner p(settings);
  for (const auto& in : rows) p.add_row(in);
  return p.finish();
}

}  // namespace sb::plan
