#include "sagebuild/plan/plan.h"

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

std::string arch_list(const std::vector<matrix::Arch>& archs) {
  std::string s;
  for (const auto& a : archs) s += (s.empty() ? "" : " ") + a.name;
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
  for (const auto& d : in.extension.include_dirs) job.include_dirs.push_back(in.site.source / d);
  job.defines = flags.defines;
  job.device_flags = flags.device_flags;
  job.host_flags = flags.host_flags;
  job.flags_origin = in.extension.origin;
  // Objects are shared between checkouts (their keys are relative to the
  // source tree): none may name the one that compiled it.
  job.unrecorded_prefixes = {in.site.source};
  return job;
}

class Planner {
 public:
  explicit Planner(const PlanSettings& st) : st_(st) {
    exists_ = st.exists ? st.exists : [](const fs::path& p) { return fs::exists(p); };
  }

  void add_row(const RowInput& in) {
    RowGraph rg;
    rg.row_id = in.row.id;
    for (const auto& f : in.extension.families) rg.families.push_back(f.name);
    rg.skipped_families = in.extension.skipped_families;
    for (const auto& unit : in.extension.kernels) rg.kernels.push_back(add_kernel(in, unit));
    rg.binding = add_binding(in);
    rg.stable_abi_target = in.extension.binding.stable_abi_target;
    add_link(in, rg);
    g_.rows.push_back(std::move(rg));
  }

  CompileGraph finish() {
    for (auto* group : {&bindings_, &links_})
      for (auto& e : *group) g_.edges.push_back(std::move(e));
    return std::move(g_);
  }

 private:
  std::vector<fs::path> key_include_dirs(const RowInput& in) const {
    std::vector<fs::path> dirs;
    for (const auto& d : in.extension.include_dirs) dirs.push_back(st_.repo_root / d);
    return dirs;
  }

  // The object of `job` under its key, with an edge unless the cache has it
  // or another row of this build already planned it.
  PlannedObject object(const RowInput& in, CompileJob job, const std::string& family, const std::string& key,
                       const std::string& description, std::vector<run::Edge>& edges, int& cached, int& to_compile) {
    const HostToolchain& tc = *in.toolchain.host;
    PlannedObject obj{family, job.source, key, in.site.objects / (key + tc.object_suffix()), false};
    if (planned_.count(obj.object)) {
      obj.cached = cached_[obj.object];
      return obj;
    }
    planned_.insert(obj.object);
    obj.cached = cached_[obj.object] = exists_(obj.object);
    (obj.cached ? cached : to_compile)++;
    if (obj.cached) return obj;
    run::Edge e;
    e.output = obj.object;
    e.temp = in.site.objects / ("." + key + "." + short_hash(in.site.work.string()) + ".tmp" + tc.object_suffix());
    e.inputs = {job.source};
    job.object = e.temp;
    e.argv = in.site.launcher;
    for (auto& a : tc.compile_command(job)) e.argv.push_back(std::move(a));
    e.command = tc.run_then_move(e.argv, e.temp, e.output);
    e.description = description;
    edges.push_back(std::move(e));
    return obj;
  }

  PlannedObject add_kernel(const RowInput& in, const KernelUnit& unit) {
    CompileJob job = job_for(SourceKind::cuda, in, unit.source, unit.flags);
    job.gencode = unit.gencode;
    std::vector<std::string> flags = key_flags(unit.flags);
    flags.insert(flags.end(), unit.gencode.begin(), unit.gencode.end());
    std::string key = object_key(ObjectKeyInput{st_.repo_root / unit.source, st_.repo_root, key_include_dirs(in),
                                                in.toolchain.host->identity(), flags, ""},
                                 st_.read);
    return object(in, job, unit.family, key,
                  "nvcc " + unit.family + " " + unit.source.generic_string() + " [" + arch_list(unit.targets) + "]",
                  g_.edges, g_.kernels_cached, g_.kernels_to_compile);
  }

  // The binding compiles against torch's and Python's headers, which are
  // outside the repository: their identity (the torch build, or for the
  // stable ABI its target version, and the Python version) is in the key.
  // The stable headers of any release >= the target compile it for every
  // release >= the target, so the first one compiled serves all of them.
  PlannedObject add_binding(const RowInput& in) {
    const auto& b = in.extension.binding;
    const auto& tc = in.toolchain;
    CompileJob job = job_for(SourceKind::cxx, in, b.source, b.flags);
    job.system_include_dirs = {tc.torch.root / "include",
                               tc.torch.root / "include" / "torch" / "csrc" / "api" / "include", tc.cuda_include,
                               tc.python_include};
    job.cxx11_abi = tc.torch.cxx11_abi;
    // Nor the torch: its headers' paths (STD_TORCH_CHECK's __FILE__) are
    // recorded from its site-packages on, "torch/include/...".
    job.unrecorded_prefixes.push_back(tc.torch.root.parent_path());
    std::string torch_id =
        b.stable_abi_target ? "torch stable-abi target " + *b.stable_abi_target : "torch " + tc.torch.version;
    std::string extra = torch_id + " cxx11=" + (tc.torch.cxx11_abi ? "1" : "0") + " cuda " + tc.nvcc_version +
                        " python-headers " + tc.python_version;
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
  fs::path extension_path(const RowInput& in, const RowGraph& rg) const {
    if (!rg.stable_abi_target) return in.site.work / "rows" / in.row.id / rg.extension_name;
    Sha256 h;
    auto field = [&](std::string_view s) {
      h.update(std::to_string(s.size()) + ":");
      h.update(s);
    };
    field("sagebuild-stable-extension-v3");  // v3: linked without local symbols
    field(rg.extension_name);
    field(in.toolchain.host->identity());
    for (const auto& k : rg.kernels) field(k.key);
    field(rg.binding.key);
    for (const auto& lib : in.extension.torch_libs) field(lib);
    field(in.extension.cudart_static ? "cudart static" : "cudart shared");
    return in.site.extensions / hex(h.finish()) / rg.extension_name;
  }

  void add_link(const RowInput& in, RowGraph& rg) {
    const auto& tc = in.toolchain;
    toolchain::LinkJob job;
    job.abi = in.row.abi_mode;
    job.python = toolchain::parse_python_version(in.row.build_python, "row " + in.row.id);
    rg.extension_name = tc.host->extension_filename(job.abi, job.python);
    rg.extension = extension_path(in, rg);
    if (!planned_.insert(rg.extension).second) {  // another row of this build links it
      rg.extension_cached = cached_[rg.extension];
      return;
    }
    rg.extension_cached = cached_[rg.extension] = rg.stable_abi_target && exists_(rg.extension);
    (rg.extension_cached ? g_.links_cached : g_.links)++;
    if (rg.extension_cached) return;
    for (const auto& k : rg.kernels) job.objects.push_back(k.object);
    job.objects.push_back(rg.binding.object);
    job.torch_lib_dir = tc.torch.root / "lib";
    job.torch_libs = in.extension.torch_libs;
    job.cuda_lib_dir = tc.cuda_lib;
    job.cudart_static = in.extension.cudart_static;
    job.python_lib_dir = tc.python_lib_dir;
    run::Edge e;
    e.output = rg.extension;
    e.temp = rg.extension.parent_path() / ("." + rg.extension_name + "." + short_hash(in.site.work.string()) + ".tmp");
    e.inputs = job.objects;
    job.output = e.temp;
    e.argv = tc.host->link_command(job);
    e.command = tc.host->run_then_move(e.argv, e.temp, e.output);
    e.description = rg.stable_abi_target ? "link " + rg.extension_name + " (stable ABI " + *rg.stable_abi_target +
                                               ", shared by torch >= " + in.extension.binding.stable_abi_min_torch + ")"
                                         : "link " + in.row.id + "/" + rg.extension_name;
    links_.push_back(std::move(e));
  }

  const PlanSettings& st_;
  std::function<bool(const fs::path&)> exists_;
  std::set<fs::path> planned_;       // outputs that already have an edge (or are cached)
  std::map<fs::path, bool> cached_;  // whether each of them was in the cache
  std::vector<run::Edge> bindings_, links_;
  CompileGraph g_;
};

}  // namespace

CompileGraph plan_compile(const std::vector<RowInput>& rows, const PlanSettings& settings) {
  Planner p(settings);
  for (const auto& in : rows) p.add_row(in);
  return p.finish();
}

}  // namespace sb::plan
