#include "sagebuild/plan/extension.h"

#include <algorithm>
#include <cstdio>

#include "sagebuild/common/error.h"
#include "sagebuild/matrix/arch.h"
#include "sagebuild/toolchain/torch.h"

namespace sb::plan {

using matrix::Arch;
using toolchain::CxxStandard;

namespace {

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

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
    if (starts_with(flag, prefix)) list = flag.substr(std::string_view(prefix).size());
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

std::string sm_name(const Arch& a) { return std::to_string(a.sm) + (a.arch_specific ? "a" : ""); }

}  // namespace

CompileFlags split_nvcc_flags(const std::vector<std::string>& flags, const std::string& origin) {
  CompileFlags f;
  for (const auto& flag : flags) {
    if (starts_with(flag, "-std="))
      f.standard = parse_standard(flag, origin);
    else if (starts_with(flag, "-D") && flag.size() > 2)
      f.defines.push_back(flag.substr(2));
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
  for (const auto& flag : flags) {
    if (starts_with(flag, "-std="))
      f.standard = parse_standard(flag, origin);
    else if (starts_with(flag, "-D") && flag.size() > 2)
      f.defines.push_back(flag.substr(2));
    else
      f.host_flags.push_back(flag);
  }
  return f;
}

std::vector<std::string> gencode_values(const std::vector<Arch>& archs, const std::optional<Arch>& ptx,
                                        const Arch& min_arch) {
  std::vector<std::string> out;
  bool ptx_done = false;
  for (const auto& a : archs) {
    if (!matrix::arch_at_least(a, min_arch)) continue;
    std::string sm = sm_name(a);
    std::string code = "sm_" + sm;
    if (ptx && !a.arch_specific && a.sm == ptx->sm && !ptx->arch_specific) {
      code = "[sm_" + sm + ",compute_" + sm + "]";
      ptx_done = true;
    }
    out.push_back("arch=compute_" + sm + ",code=" + code);
  }
  if (ptx && !ptx_done && matrix::arch_at_least(*ptx, min_arch) && !out.empty()) {
    std::string sm = std::to_string(ptx->sm);
    out.push_back("arch=compute_" + sm + ",code=compute_" + sm);
  }
  return out;
}

std::vector<Arch> family_targets(const KernelFamily& f, const std::vector<Arch>& row_archs) {
  std::vector<Arch> out;
  if (f.min_arch) {
    for (const auto& a : row_archs)
      if (matrix::arch_at_least(a, *f.min_arch)) out.push_back(a);
    return out;
  }
  for (const auto& t : f.archs)
    if (std::any_of(row_archs.begin(), row_archs.end(), [&](const Arch& a) { return matrix::same_base_arch(a, t); }))
      out.push_back(t);
  return out;
}

std::vector<std::string> family_gencode(const KernelFamily& f, const std::vector<Arch>& row_archs,
                                        const std::optional<Arch>& ptx) {
  if (f.min_arch) return gencode_values(row_archs, ptx, *f.min_arch);
  std::vector<std::string> out;
  for (const auto& t : family_targets(f, row_archs))
    out.push_back("arch=compute_" + sm_name(t) + ",code=sm_" + sm_name(t));
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

std::string limited_api_hex(const std::string& python_version) {
  auto v = toolchain::parse_python_version(python_version, "Py_LIMITED_API");
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02X%02X0000", v.major, v.minor);
  return buf;
}

namespace {

std::vector<KernelUnit> kernel_units(const KernelManifest& m, const matrix::Row& row, ExtensionSpec& spec) {
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
    if (!starts_with(d, "Py_LIMITED_API")) b.flags.defines.push_back(d);
  if (row.abi_mode == wheel::AbiMode::abi3)
    b.flags.defines.push_back("Py_LIMITED_API=" +
                              limited_api_hex(row.pythons.empty() ? row.build_python : row.pythons.front()));
  return b;
}

}  // namespace

ExtensionSpec extension_from_families(const KernelManifest& m, const matrix::Row& row) {
  ExtensionSpec spec;
  spec.origin = m.path.string();
  spec.include_dirs.assign(m.include_dirs.begin(), m.include_dirs.end());
  spec.kernels = kernel_units(m, row, spec);
  spec.binding = binding_unit(m, row);
  spec.torch_libs = toolchain::torch_link_libraries(spec.binding.stable_abi_target.has_value());
  spec.cudart_static = m.cudart_static;
  return spec;
}

}  // namespace sb::plan
