#include "sagebuild/build/plan.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "sagebuild/common/error.h"
#include "sagebuild/common/hash.h"

namespace sb::build {

namespace fs = std::filesystem;
using sb::matrix::Arch;

std::vector<std::string> gencode_flags(const std::vector<Arch>& archs, const std::optional<Arch>& ptx,
                                       const Arch& min_arch) {
  std::vector<std::string> out;
  bool ptx_done = false;
  for (const auto& a : archs) {
    if (!arch_at_least(a, min_arch)) continue;
    std::string sm = std::to_string(a.sm) + (a.arch_specific ? "a" : "");
    std::string code = "sm_" + sm;
    if (ptx && !a.arch_specific && a.sm == ptx->sm && !ptx->arch_specific) {
      code = "[sm_" + sm + ",compute_" + sm + "]";
      ptx_done = true;
    }
    out.push_back("-gencode");
    out.push_back("arch=compute_" + sm + ",code=" + code);
  }
  if (ptx && !ptx_done && arch_at_least(*ptx, min_arch) && !out.empty()) {
    std::string sm = std::to_string(ptx->sm);
    out.push_back("-gencode");
    out.push_back("arch=compute_" + sm + ",code=compute_" + sm);
  }
  return out;
}

std::vector<Arch> family_targets(const KernelFamily& f, const std::vector<Arch>& row_archs) {
  std::vector<Arch> out;
  if (f.min_arch) {
    for (const auto& a : row_archs)
      if (arch_at_least(a, *f.min_arch)) out.push_back(a);
    return out;
  }
  for (const auto& t : f.archs)
    if (std::any_of(row_archs.begin(), row_archs.end(), [&](const Arch& a) { return same_base_arch(a, t); }))
      out.push_back(t);
  return out;
}

std::vector<std::string> family_gencode_flags(const KernelFamily& f, const std::vector<Arch>& row_archs,
                                              const std::optional<Arch>& ptx) {
  if (f.min_arch) return gencode_flags(row_archs, ptx, *f.min_arch);
  std::vector<std::string> out;
  for (const auto& t : family_targets(f, row_archs)) {
    std::string sm = std::to_string(t.sm) + (t.arch_specific ? "a" : "");
    out.push_back("-gencode");
    out.push_back("arch=compute_" + sm + ",code=sm_" + sm);
  }
  return out;
}

std::string skip_reason(const KernelFamily& f) {
  if (f.min_arch) return "no arch >= min_arch " + f.min_arch->name;
  std::string bases, targets;
  for (const auto& t : f.archs) {
    std::string base = t.name;
    if (t.arch_specific) base.pop_back();
    bases += (bases.empty() ? "" : ", ") + (t.arch_specific ? base + ", " + t.name : t.name);
    targets += (targets.empty() ? "" : ", ") + t.name;
  }
  return "the row lists none of " + bases + " (for its archs " + targets + ")";
}

std::string limited_api_hex(const std::string& v) {
  static const std::regex re(R"((\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_match(v, m, re))
    throw UsageError("Python version \"" + v + "\" is not <major>.<minor>");
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02X%02X0000", std::stoi(m[1].str()), std::stoi(m[2].str()));
  return buf;
}

std::string extension_file_name(const sb::matrix::Row& row, const std::string& ext_suffix) {
  if (row.abi_mode == sb::matrix::AbiMode::abi3) return "_C.abi3.so";
  if (ext_suffix.empty())
    throw UsageError("row " + row.id + " is per-interpreter but the Python " + row.build_python +
                     " extension suffix is unknown: pass --python with a Python " + row.build_python);
  return "_C" + ext_suffix;
}

namespace {

std::string short_hash(const std::string& s) { return hex(sha256(s)).substr(0, 12); }

std::vector<std::string> with_launcher(const std::vector<std::string>& launcher,
                                       std::vector<std::string> argv) {
  argv.insert(argv.begin(), launcher.begin(), launcher.end());
  return argv;
}

std::string arch_list(const std::vector<Arch>& archs) {
  std::string s;
  for (const auto& a : archs) s += (s.empty() ? "" : " ") + a.name;
  return s;
}

}  // namespace

CompileGraph plan_compile(const std::vector<RowInput>& rows, const PlanSettings& st) {
  CompileGraph g;
  auto exists = st.exists ? st.exists : [](const fs::path& p) { return fs::exists(p); };
  std::string tmp_tag = short_hash(st.work_dir.string());
  std::set<fs::path> planned;  // outputs that already have an edge (or are cached)
  std::map<fs::path, bool> cached_by_object;

  auto add_object = [&](PlannedObject& obj, std::vector<std::string> argv_without_output,
                        const std::string& desc, bool kernel) {
    obj.object = st.objects_dir / (obj.key + ".o");
    if (planned.count(obj.object)) {
      obj.cached = cached_by_object[obj.object];
      return;
    }
    planned.insert(obj.object);
    obj.cached = exists(obj.object);
    cached_by_object[obj.object] = obj.cached;
    if (kernel) (obj.cached ? g.kernels_cached : g.kernels_to_compile)++;
    else (obj.cached ? g.bindings_cached : g.bindings_to_compile)++;
    if (obj.cached) return;
    Edge e;
    e.output = obj.object;
    e.temp = st.objects_dir / ("." + obj.key + "." + tmp_tag + ".tmp.o");
    e.inputs = {obj.source};
    argv_without_output.push_back("-o");
    argv_without_output.push_back(e.temp.string());
    e.argv = with_launcher(st.launcher, std::move(argv_without_output));
    e.description = desc;
    g.edges.push_back(std::move(e));
  };

  std::vector<Edge> links;
  for (const auto& in : rows) {
    const auto& row = in.row;
    const auto& tc = in.toolchain;
    const auto& man = in.manifest;
    RowGraph rg;
    rg.row_id = row.id;
    std::vector<fs::path> inc_dirs;
    for (const auto& d : man.include_dirs) inc_dirs.push_back(st.repo_root / d);
    std::string compiler = "nvcc " + tc.nvcc_version + " / " + tc.host_compiler;

    for (const auto& fam : man.families) {
      auto gencode = family_gencode_flags(fam, row.archs, row.ptx_arch);
      if (gencode.empty()) {
        rg.skipped_families.push_back({fam.name, skip_reason(fam)});
        continue;
      }
      rg.families.push_back(fam.name);
      // Flags that enter the key: everything but paths.
      std::vector<std::string> flags = man.nvcc_flags;
      if (flags.empty()) flags = {"-std=c++17", "-O3"};
      // Objects go into a shared library: position-independent, whatever the manifest says.
      if (std::none_of(flags.begin(), flags.end(), [](const std::string& f) { return f.find("-fPIC") != std::string::npos; }))
        flags.push_back("-Xcompiler=-fPIC");
      flags.insert(flags.end(), gencode.begin(), gencode.end());
      for (const auto& src : fam.sources) {
        PlannedObject obj;
        obj.family = fam.name;
        obj.source = st.repo_root / src;
        obj.key = object_key(ObjectKeyInput{obj.source, st.repo_root, inc_dirs, compiler, flags, ""}, st.read);
        std::vector<std::string> argv = {tc.nvcc.string(), "-c", obj.source.string(), "-ccbin",
                                         tc.host_cxx.string()};
        for (const auto& d : inc_dirs) argv.push_back("-I" + d.string());
        argv.insert(argv.end(), flags.begin(), flags.end());
        add_object(obj, argv, "nvcc " + fam.name + " " + src + " [" + arch_list(family_targets(fam, row.archs)) + "]", true);
        rg.kernels.push_back(obj);
      }
    }

    // The binding: compiled by the host compiler against torch's headers.
    // Rows whose torch uses the stable-ABI binding compile a torch-release-
    // independent object (TORCH_TARGET_VERSION), else the classic one per
    // torch release.
    const StableAbiBinding* stable = man.stable_binding_for(row.torch);
    if (!stable && man.binding_sources.size() != 1)
      throw UsageError(man.path.string() + ": binding.sources must name exactly one file (got " +
                       std::to_string(man.binding_sources.size()) + ")");
    const std::string binding_src = stable ? stable->source : man.binding_sources.front();
    bool abi3 = row.abi_mode == sb::matrix::AbiMode::abi3;
    std::string py_min = row.pythons.empty() ? row.build_python : row.pythons.front();
    std::vector<std::string> bflags = man.cxx_flags;
    if (bflags.empty()) bflags = {"-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden"};
    bflags.push_back("-D_GLIBCXX_USE_CXX11_ABI=" + std::string(tc.cxx11_abi ? "1" : "0"));
    bflags.push_back("-DTORCH_EXTENSION_NAME=_C");
    if (stable) bflags.push_back("-DTORCH_TARGET_VERSION=" + stable->target_version_macro());
    // The limited API version is the row's oldest Python, not the manifest's.
    for (const auto& d : man.binding_defines)
      if (d.rfind("Py_LIMITED_API", 0) != 0) bflags.push_back("-D" + d);
    if (abi3) bflags.push_back("-DPy_LIMITED_API=" + limited_api_hex(py_min));
    PlannedObject b;
    b.family = "binding";
    b.source = st.repo_root / binding_src;
    std::vector<fs::path> binc = inc_dirs;
    // torch and Python headers are outside the repository: their identity is
    // the torch version and the Python version, in `extra`.  A stable-ABI
    // object is keyed by its target version instead of the torch release: the
    // stable headers of any release >= the target compile it for every
    // release >= the target (the point of TORCH_TARGET_VERSION), so the first
    // one compiled serves all of them.
    std::string torch_id = stable ? "torch stable-abi target " + stable->target_version.str() : "torch " + tc.torch_version;
    std::string extra = torch_id + " cxx11=" + (tc.cxx11_abi ? "1" : "0") + " cuda " + tc.nvcc_version +
                        " python-headers " + tc.python_version;
    b.key = object_key(ObjectKeyInput{b.source, st.repo_root, binc, tc.host_compiler, bflags, extra}, st.read);
    std::vector<std::string> bargv = {tc.host_cxx.string(), "-c", b.source.string()};
    bargv.insert(bargv.end(), bflags.begin(), bflags.end());
    // A shared object must not name the checkout that compiled it (__FILE__
    // in the registration macros): paths relative to the repository.
    if (stable) bargv.push_back("-ffile-prefix-map=" + st.repo_root.string() + "/=");
    for (const auto& d : inc_dirs) bargv.push_back("-I" + d.string());
    for (const auto& d : {(tc.torch_root / "include").string(),
                          (tc.torch_root / "include/torch/csrc/api/include").string(),
                          tc.cuda_include.string(), tc.python_include.string()})
      bargv.push_back("-isystem" + d);
    add_object(b, bargv,
               "c++ binding " + binding_src +
                   (stable ? " [stable ABI " + stable->target_version.str() + ", headers of torch " + tc.torch_version + "]"
                           : " [torch " + tc.torch_version + "]"),
               false);
    rg.binding = b;
    if (stable) rg.stable_abi_target = stable->target_version.str();

    // The link.  No rpath: the extension finds torch's and CUDA's libraries
    // through torch (imported first), never through build paths.
    rg.extension_name = extension_file_name(row, tc.ext_suffix);
    // libstdc++ first: torch's libraries export some std:: template
    // instances too, and whichever library comes first defines the
    // reference; from libstdc++ it carries its GLIBCXX_* version.
    std::vector<std::string> libs = {"-lstdc++", "-L" + (tc.torch_root / "lib").string()};
    if (stable) {
      // The stable binding calls only the C shim (libtorch_cpu) and, for the
      // current CUDA stream, libtorch_cuda; --as-needed keeps the others out
      // of DT_NEEDED.  Their sonames carry no version, so the same extension
      // loads with every torch release.
      libs.insert(libs.end(), {"-Wl,--as-needed", "-ltorch_cpu", "-ltorch_cuda", "-Wl,--no-as-needed"});
    } else {
      libs.insert(libs.end(), {"-lc10", "-lc10_cuda", "-ltorch", "-ltorch_cpu", "-ltorch_cuda"});
    }
    libs.push_back("-L" + tc.cuda_lib.string());
    if (man.cudart_static) libs.insert(libs.end(), {"-l:libcudart_static.a", "-ldl", "-lrt", "-lpthread"});
    else libs.push_back("-lcudart");
    if (stable) {
      // Keyed by everything the link reads but torch: the objects (their keys
      // cover sources, compilers and flags), the library flags without paths
      // and the file name.
      Sha256 h;
      auto field = [&](std::string_view s) {
        h.update(std::to_string(s.size()) + ":");
        h.update(s);
      };
      field("sagebuild-stable-extension-v1");
      field(rg.extension_name);
      field(tc.host_compiler);
      for (const auto& k : rg.kernels) field(k.key);
      field(b.key);
      for (const auto& f : libs)
        if (f.rfind("-L", 0) != 0) field(f);
      fs::path ext_dir = st.extensions_dir.empty() ? st.objects_dir.parent_path() / "extensions" : st.extensions_dir;
      rg.extension = ext_dir / hex(h.finish()) / rg.extension_name;
    } else {
      rg.extension = st.work_dir / "rows" / row.id / rg.extension_name;
    }
    if (!planned.insert(rg.extension).second) {  // another row of this build links it
      rg.extension_cached = cached_by_object[rg.extension];
      g.rows.push_back(std::move(rg));
      continue;
    }
    rg.extension_cached = stable && exists(rg.extension);
    cached_by_object[rg.extension] = rg.extension_cached;
    (rg.extension_cached ? g.links_cached : g.links)++;
    if (rg.extension_cached) {
      g.rows.push_back(std::move(rg));
      continue;
    }
    Edge link;
    link.output = rg.extension;
    link.temp = rg.extension.parent_path() / ("." + rg.extension_name + "." + tmp_tag + ".tmp");
    std::vector<std::string> largv = {tc.host_cxx.string(), "-shared", "-o", link.temp.string()};
    for (const auto& k : rg.kernels) {
      largv.push_back(k.object.string());
      link.inputs.push_back(k.object);
    }
    largv.push_back(rg.binding.object.string());
    link.inputs.push_back(rg.binding.object);
    largv.insert(largv.end(), libs.begin(), libs.end());
    link.argv = std::move(largv);
    link.description = stable ? "link " + rg.extension_name + " (stable ABI " + *rg.stable_abi_target + ", shared by torch >= " +
                                    stable->min_torch.str() + ")"
                              : "link " + row.id + "/" + rg.extension_name;
    links.push_back(std::move(link));
    g.rows.push_back(std::move(rg));
  }
  for (auto& l : links) g.edges.push_back(std::move(l));
  return g;
}

}  // namespace sb::build
