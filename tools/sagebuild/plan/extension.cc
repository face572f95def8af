#include "sagebuild/plan/extension.h"

#include <algorithm>
#include <cstdio>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/toolchain/provision.h"
#include "sagebuild/toolchain/torch.h"

namespace sb::plan {

namespace fs = std::filesystem;
using toolchain::CxxStandard;

namespace {

CxxStandard parse_standard(const std::string& flag, const std::string& origin) {
  if (flag == "-std=c++17") return CxxStandard::cxx17;
  if (flag == "-std=c++20") return CxxStandard::cxx20;
  throw UsageError(origin + ": " + flag +
                   " is not a standard sagebuild builds with (expected -std=c++17 or -std=c++20)");
}

// "-Xcompiler=-fPIC,-O2" -> {-fPIC, -O2}; empty when `flag` passes none.
std::vector<std::string> host_flags_of(const std::string& flag) {
  std::string list;
  for (const char* prefix : {"-Xcompiler=", "--compiler-options="})
    if (flag.starts_with(prefix)) list = flag.substr(std::string_view(prefix).size());
  std::vector<std::string> out;
  std::size_t start = 0;
  while (!list.empty() && start <= list.size()) {
    std::size_t comma = list.find(',', start);
    std::string one = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!one.empty()) out.push_back(one);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// -UNAME after -DNAME (torch's CUDAExtension defines __CUDA_NO_HALF_OPERATORS__,
// upstream's flags undefine it): the define is dropped, as the compiler
// would, since the toolchains write defines after the other flags.  A -U of
// a name not defined here stays a flag (it undefines a predefined macro).
bool undefine(std::vector<std::string>& defines, const std::string& flag) {
  std::string name = flag.substr(2);
  auto named = [&](const std::string& d) { return d == name || d.rfind(name + "=", 0) == 0; };
  auto before = defines.size();
  defines.erase(std::remove_if(defines.begin(), defines.end(), named), defines.end());
  return defines.size() != before;
}

// The flags both compilers share: -std=, -D, and a -U that drops an earlier
// -D (as the compiler would).  False for any other flag, and for a -U with no
// -D before it, which the caller passes on.
bool take_standard_or_define(const std::string& flag, const std::string& origin, CompileFlags& f) {
  if (flag.starts_with("-std="))
    f.standard = parse_standard(flag, origin);
  else if (flag.starts_with("-D") && flag.size() > 2)
    f.defines.push_back(flag.substr(2));
  else
    return flag.starts_with("-U") && flag.size() > 2 && undefine(f.defines, flag);
  return true;
}

}  // namespace

CompileFlags split_nvcc_flags(const std::vector<std::string>& flags, const std::string& origin) {
  CompileFlags f;
  for (const auto& flag : flags) {
    if (take_standard_or_define(flag, origin, f))
      continue;
    else if (auto host = host_flags_of(flag); !host.empty())
      f.host_flags.insert(f.host_flags.end(), host.begin(), host.end());
    else if (flag == "-Xcompiler" || flag == "--compiler-options")
      throw UsageError(origin + ": nvcc flag " + flag + " takes its value after '=' here (-Xcompiler=-fPIC)");
    else
      f.device_flags.push_back(flag);
  }
  return f;
}

CompileFlags split_cxx_flags(const std::vector<std::string>& flags, const std::string& origin) {
  CompileFlags f;
  for (const auto& flag : flags)
    if (!take_standard_or_define(flag, origin, f)) f.host_flags.push_back(flag);
  return f;
}

std::vector<std::string> gencode_values(const std::vector<Arch>& archs, const std::optional<Arch>& ptx,
                                        const Arch& min_arch) {
  std::vector<std::string> out;
  bool ptx_done = false;
  for (const auto& a : archs) {
    if (!arch_at_least(a, min_arch)) continue;
    std::string code = a.sass();
    if (ptx && !a.arch_specific && a.sm == ptx->sm && !ptx->arch_specific) {
      code = "[" + a.sass() + "," + a.ptx() + "]";
      ptx_done = true;
    }
    out.push_back("arch=" + a.ptx() + ",code=" + code);
  }
  if (ptx && !ptx_done && arch_at_least(*ptx, min_arch) && !out.empty()) {
    std::string compute = Arch{ptx->sm, false}.ptx();  // PTX of the capability, never of an 'a' target
    out.push_back("arch=" + compute + ",code=" + compute);
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

std::vector<std::string> family_gencode(const KernelFamily& f, const std::vector<Arch>& row_archs,
                                        const std::optional<Arch>& ptx) {
  if (f.min_arch) return gencode_values(row_archs, ptx, *f.min_arch);
  std::vector<std::string> out;
  for (const auto& t : family_targets(f, row_archs)) out.push_back("arch=" + t.ptx() + ",code=" + t.sass());
  return out;
}

std::string skip_reason(const KernelFamily& f) {
  if (f.min_arch) return "no arch >= min_arch " + f.min_arch->name();
  std::string bases, targets;
  for (const auto& t : f.archs) {
    bases += (bases.empty() ? "" : ", ") + (t.arch_specific ? t.capability() + ", " + t.name() : t.name());
    targets += (targets.empty() ? "" : ", ") + t.name();
  }
  return "the row lists none of " + bases + " (for its archs " + targets + ")";
}

std::string limited_api_hex(const matrix::PythonVersion& v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02X%02X0000", v.major, v.minor);
  return buf;
}

namespace {

std::vector<KernelUnit> kernel_units(const KernelManifest& m, const matrix::Row& row, RowSpec& spec) {
  // Without flags of its own the manifest gets the defaults nvcc builds with.
  CompileFlags flags = split_nvcc_flags(
      m.nvcc_flags.empty() ? std::vector<std::string>{"-std=c++17", "-O3"} : m.nvcc_flags, m.path.string());
  std::vector<KernelUnit> units;
  for (const auto& fam : m.families) {
    auto gencode = family_gencode(fam, row.archs, row.ptx_arch);
    if (gencode.empty()) {
      spec.skipped_families.push_back({fam.name, skip_reason(fam)});
      continue;
    }
    KernelFamily built = fam;
    if (!fam.min_arch) built.archs = family_targets(fam, row.archs);
    spec.families.push_back(std::move(built));
    for (const auto& src : fam.sources)
      units.push_back(KernelUnit{fam.name, src, family_targets(fam, row.archs), gencode, flags});
  }
  return units;
}

// The binding: the classic one per torch release, or, where families.json's
// binding.stable_abi serves the row's torch, the stable-ABI one, compiled
// once for every such release (TORCH_TARGET_VERSION).
BindingUnit binding_unit(const KernelManifest& m, const matrix::Row& row) {
  const StableAbiBinding* stable = m.stable_binding_for(row.torch);
  if (!stable && m.binding_sources.size() != 1)
    throw UsageError(m.path.string() + ": binding.sources must name exactly one file (got " +
                     std::to_string(m.binding_sources.size()) + ")");
  BindingUnit b;
  b.source = stable ? stable->source : m.binding_sources.front();
  b.flags = split_cxx_flags(
      m.cxx_flags.empty() ? std::vector<std::string>{"-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden"} : m.cxx_flags,
      m.path.string());
  b.flags.defines.push_back("TORCH_EXTENSION_NAME=_C");
  if (stable) {
    b.flags.defines.push_back("TORCH_TARGET_VERSION=" + stable->target_version_macro());
    b.stable_abi_target = stable->target_version.str();
    b.stable_abi_min_torch = stable->min_torch.str();
  }
  // The limited API version is the row's oldest Python, not the manifest's.
  for (const auto& d : m.binding_defines)
    if (!d.starts_with("Py_LIMITED_API")) b.flags.defines.push_back(d);
  if (row.abi_mode == wheel::AbiMode::abi3)
    b.flags.defines.push_back("Py_LIMITED_API=" +
                              limited_api_hex(row.pythons.empty() ? row.build_python : row.pythons.front()));
  return b;
}

}  // namespace

const std::optional<std::string>& ExtensionSpec::stable_abi_target() const {
  static const std::optional<std::string> none;
  return bindings.empty() ? none : bindings.front().stable_abi_target;
}

RowSpec extension_from_families(const KernelManifest& m, const matrix::Row& row) {
  RowSpec spec;
  spec.origin = m.path.string();
  spec.include_dirs.assign(m.include_dirs.begin(), m.include_dirs.end());
  ExtensionSpec ext;
  ext.module = row.project + "._C";
  ext.kernels = kernel_units(m, row, spec);
  ext.bindings = {binding_unit(m, row)};
  ext.torch_libs = toolchain::torch_link_libraries(ext.bindings.front().stable_abi_target.has_value());
  ext.cudart_static = m.cudart_static;
  ext.ops_namespace = row.project;
  spec.extensions.push_back(std::move(ext));
  if (row.ptx_arch) spec.ptx_archs.push_back(*row.ptx_arch);
  spec.package = row.project;
  spec.package_dir = fs::path("python") / row.project;
  spec.summary = "SageAttention: quantized attention kernels for PyTorch (built for torch " + row.torch.str() +
                 ", CUDA " + row.cuda.release_str() + ")";
  spec.license_expression = "MIT";
  spec.license_file = "LICENSE";
  return spec;
}

namespace {

// The row's archs as the tree's build compiles them (setup.py: 9.0 as 9.0a).
std::vector<Arch> tree_targets(const SourceManifest& m, const std::vector<Arch>& row_archs) {
  std::vector<Arch> out;
  for (const auto& a : row_archs) {
    auto it = m.arch_targets.find(a);
    Arch t = it == m.arch_targets.end() ? a : it->second;
    if (!contains_arch(out, t)) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool is_cuda(const std::string& path) { return path.size() > 3 && path.substr(path.size() - 3) == ".cu"; }

// The extension as a kernel family: what build_info.json records and verify
// checks, named by the module's last component.
KernelFamily family_of(const SourceExtension& e) {
  KernelFamily f;
  f.name = e.module.substr(e.module.rfind('.') + 1);
  for (const auto& s : e.sources)
    if (is_cuda(s)) f.sources.push_back(s);
  f.min_arch = e.min_arch;
  f.archs = e.archs;
  f.symbol_marker = e.symbol_marker;
  return f;
}

// Upstream's units include <torch/extension.h> and are pybind11 modules
// named by TORCH_EXTENSION_NAME, as torch's CUDAExtension compiles them.
std::vector<std::string> module_defines(const std::string& module) {
  return {"TORCH_API_INCLUDE_EXTENSION_H", "TORCH_EXTENSION_NAME=" + module.substr(module.rfind('.') + 1)};
}

}  // namespace

RowSpec extensions_from_source(const SourceManifest& m, const matrix::Row& row) {
  if (row.abi_mode != wheel::AbiMode::per_interpreter)
    throw UsageError("row " + row.id + ": " + m.path.string() +
                     " describes pybind11 modules on torch's classic C++ API, which serve one Python and one torch; "
                     "the package needs abi: per-interpreter in the matrix");
  RowSpec spec;
  spec.origin = m.path.string();
  spec.include_dirs.assign(m.include_dirs.begin(), m.include_dirs.end());
  spec.headers = m.headers;
  for (auto& h : toolchain::cuda_library_headers(row.cuda, m.cuda_libraries, row.platform))
    spec.headers.push_back(std::move(h));
  std::vector<Arch> targets = tree_targets(m, row.archs);
  std::optional<Arch> ptx = m.ptx ? row.ptx_arch : std::nullopt;
  for (const auto& e : m.extensions) {
    KernelFamily fam = family_of(e);
    auto gencode = family_gencode(fam, targets, ptx);
    if (gencode.empty()) {
      spec.skipped_families.push_back({fam.name, skip_reason(fam)});
      continue;
    }
    // build_info.json records the exact targets built, which verify's B6
    // then demands as SASS in this module.
    KernelFamily built = fam;
    built.archs = family_targets(fam, targets);
    built.min_arch.reset();
    ExtensionSpec ext;
    ext.module = e.module;
    std::vector<std::string> nvcc = m.nvcc_flags, cxx = m.cxx_flags;
    nvcc.insert(nvcc.end(), e.nvcc_flags.begin(), e.nvcc_flags.end());
    cxx.insert(cxx.end(), e.cxx_flags.begin(), e.cxx_flags.end());
    CompileFlags nvcc_flags = split_nvcc_flags(nvcc, m.path.string());
    CompileFlags cxx_flags = split_cxx_flags(cxx, m.path.string());
    for (auto* f : {&nvcc_flags, &cxx_flags})
      for (auto& d : module_defines(e.module)) f->defines.push_back(d);
    for (const auto& s : e.sources) {
      if (is_cuda(s)) {
        KernelUnit u{fam.name, s, built.archs, gencode, nvcc_flags};
        u.torch_headers = true;
        u.peak_memory_gib_per_arch = e.peak_memory_gib;
        ext.kernels.push_back(std::move(u));
      } else {
        ext.bindings.push_back(BindingUnit{s, cxx_flags, std::nullopt, ""});
      }
    }
    // pybind11's casts of at::Tensor are torch_python's.
    ext.torch_libs = toolchain::torch_link_libraries(false);
    ext.torch_libs.push_back("torch_python");
    ext.libraries = e.libraries;
    ext.exports = e.exports;
    spec.families.push_back(std::move(built));
    spec.extensions.push_back(std::move(ext));
  }
  if (spec.extensions.empty())
    throw UsageError("row " + row.id + ": none of the extensions of " + m.path.string() +
                     " is built for the row's archs; list an arch they support");
  if (ptx) spec.ptx_archs.push_back(*ptx);
  spec.package_dir = m.package;
  spec.package = fs::path(m.package).filename().string();
  spec.package_files = m.package_files;
  spec.summary = m.summary;
  spec.license_expression = m.license_expression;
  spec.license_file = m.license_file;
  return spec;
}

}  // namespace sb::plan
