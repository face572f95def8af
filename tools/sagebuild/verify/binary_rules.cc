#include "sagebuild/verify/binary_rules.h"

#include <algorithm>
#include <cctype>

#include "sagebuild/common/arch.h"
#include "sagebuild/wheel/names.h"
#include "sagebuild/wheel/tags.h"

namespace sb::verify {

namespace {

// Platform-tag arch spellings that name the same ELF machine.
std::string normalize_arch(std::string a) {
  if (a == "amd64") return "x86_64";
  if (a == "arm64") return "aarch64";
  if (a == "i386" || a == "i586") return "i686";
  if (a.rfind("armv", 0) == 0) return "arm";  // armv5l/6l/7l are all EM_ARM: the ELF cannot tell them apart
  if (a == "mips64el") return "mips64";
  return a;
}

std::string dirname(std::string_view m) {
  auto s = m.rfind('/');
  return s == std::string_view::npos ? "" : std::string(m.substr(0, s));
}

// Resolves "$ORIGIN/../x" against the member's directory ("" = archive root).
std::string resolve_origin(const std::string& member, std::string path) {
  for (std::string_view tok : {"${ORIGIN}", "$ORIGIN"})
    if (path.starts_with(tok))
      path = dirname(member) + path.substr(tok.size());
    else if (path.front() == '/' && tok == "$ORIGIN")
      return "";  // absolute: not inside the wheel
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".")
      parts.push_back(part);
    start = end + 1;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

bool shipped_and_reachable(const BinaryFacts& b, const std::string& lib, const std::vector<std::string>& members) {
  for (const auto& rp : b.rpaths) {
    if (rp.find("$ORIGIN") == std::string::npos && rp.find("${ORIGIN}") == std::string::npos) continue;
    std::string dir = resolve_origin(b.member, rp);
    std::string want = dir.empty() ? lib : dir + "/" + lib;
    if (std::binary_search(members.begin(), members.end(), want)) return true;
  }
  return false;
}

bool is_runtime_version(std::string_view v) {
  return v.starts_with("GLIBC_") || v.starts_with("GLIBCXX_") || v.starts_with("CXXABI_") || v.starts_with("GCC_") ||
         v.starts_with("LIBATOMIC_");
}

bool is_cuda_symbol(std::string_view n) {
  return n.starts_with("cuda") || n.starts_with("__cuda") || n.starts_with("cu") || n.starts_with("nv") ||
         n.starts_with("__nv") || n.starts_with("__fatbinwrap");
}

bool is_torch_symbol(std::string_view n) {
  static const std::set<std::string> torch_ns = {"at", "c10", "torch", "caffe2", "pybind11"};
  if (torch_ns.count(outer_namespace(n))) return true;
  std::string plain = outer_namespace(n).empty() ? std::string(n) : outer_namespace(n);
  // The stable ABI's C shim (torch/csrc/inductor/aoti_torch/c/shim.h,
  // torch/csrc/stable/c/shim.h): plain C names exported by libtorch_cpu/cuda.
  return plain.starts_with("THP") || n.starts_with("THP") || n.starts_with("aoti_torch_") || n.starts_with("torch_");
}

}  // namespace

std::optional<wheel::TorchBinding> torch_binding(const BinaryFacts& b) {
  static const std::set<std::string> cxx = {"at", "c10", "torch", "caffe2"};
  bool shim = false;
  for (const auto& s : b.undefined) {
    if (cxx.count(outer_namespace(s.name))) return wheel::TorchBinding::classic;
    shim |= s.name.starts_with("aoti_torch_") || s.name.starts_with("torch_");
  }
  if (shim) return wheel::TorchBinding::stable_abi;
  return std::nullopt;
}

std::string outer_namespace(std::string_view m) {
  if (!m.starts_with("_Z")) return {};
  m.remove_prefix(2);
  if (m.size() >= 2 && m[0] == 'T' && (m[1] == 'I' || m[1] == 'V' || m[1] == 'S'))
    m.remove_prefix(2);  // typeinfo, vtable, name
  if (!m.empty() && m[0] == 'N') m.remove_prefix(1);
  while (!m.empty() && (m[0] == 'K' || m[0] == 'V' || m[0] == 'r' || m[0] == 'R' || m[0] == 'O')) m.remove_prefix(1);
  std::size_t len = 0, i = 0;
  while (i < m.size() && std::isdigit(static_cast<unsigned char>(m[i]))) len = len * 10 + (m[i++] - '0');
  if (i == 0 || i + len > m.size()) return {};
  return std::string(m.substr(i, len));
}

void check_machine(const BinaryFacts& b, const std::string& platform_tag, Findings& out) {
  auto info = wheel::classify_platform(platform_tag);
  using F = wheel::PlatformFamily;
  if (info.family != F::Linux && info.family != F::Manylinux && info.family != F::Musllinux) return;
  if (b.machine.empty() || b.machine.rfind("em_", 0) == 0) return;  // a machine the reader does not name
  if (normalize_arch(info.arch) != normalize_arch(b.machine))
    add(out, "P1", Severity::Strict, b.member, "ELF machine " + b.machine,
        info.arch + " (platform tag " + platform_tag + ")");
}

void check_pe_machine(const std::string& member, const std::string& pe_platform, const std::string& platform_tag,
                      Findings& out) {
  if (wheel::classify_platform(platform_tag).family != wheel::PlatformFamily::Windows) return;
  if (pe_platform != platform_tag)
    add(out, "P9", Severity::Strict, member,
        "PE machine " + (pe_platform.empty() ? std::string("unknown") : pe_platform),
        "the platform tag " + platform_tag);
}

void check_pe_cuda_runtime(const std::string& member, const std::vector<std::string>& imports,
                           const distinfo::BuildInfo& info, Findings& out) {
  std::string major = info.cuda.version.substr(0, info.cuda.version.find('.'));
  for (const auto& dll : imports) {
    std::string lower = wheel::ascii_lower(dll);
    if (!lower.starts_with("cudart64_")) continue;
    // cudart64_12.dll / cudart64_13.dll name the major; CUDA 11 wrote cudart64_110.dll.
    std::string digits;
    for (char c : lower.substr(9)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) break;
      digits += c;
    }
    std::string dll_major = digits.size() > 2 ? digits.substr(0, digits.size() - 1) : digits;
    if (dll_major != major)
      add(out, "B7", Severity::Error, member, "imports " + dll,
          "cudart64_" + major + ".dll (CUDA " + info.cuda.version + ")");
  }
}

void check_symbol_versions(const BinaryFacts& b, const ManylinuxPolicy& policy, const std::string& arch,
                           Findings& out) {
  auto families = policy.versions.find(arch);
  if (families == policy.versions.end()) return;
  for (const auto& need : b.verneed) {
    if (need.file.starts_with("ld-linux") || need.file.starts_with("ld64.so")) continue;
    for (const auto& v : need.versions) {
      auto us = v.find('_');
      if (us == std::string::npos) continue;
      auto allowed = families->second.find(v.substr(0, us));
      if (allowed == families->second.end()) continue;  // not a policy family (e.g. libcudart.so.12)
      if (v == "GLIBC_PRIVATE" || !allowed->second.count(v.substr(us + 1)))
        add(out, "P2", Severity::Strict, b.member, "needs " + v + " from " + need.file + ", outside " + policy.name,
            "a " + v.substr(0, us) + " version in the " + policy.name + " policy, or a newer platform tag");
    }
  }
}

void check_needed_libraries(const BinaryFacts& b, const ManylinuxPolicy* policy,
                            const std::vector<std::string>& allowed, const std::vector<std::string>& members,
                            Findings& out) {
  if (!policy) return;  // P3 judges manylinux claims (Android, for one, must link libpython)
  for (const auto& lib : b.needed) {
    // The dynamic loader is glibc's own (as check_symbol_versions exempts its versions).
    if (lib.starts_with("ld-linux") || lib.starts_with("ld64.so")) continue;
    if (lib.starts_with("libpython")) {
      add(out, "P3", Severity::Strict, b.member, "links " + lib, "no libpython (the interpreter provides its symbols)");
      continue;
    }
    bool ok = policy->lib_whitelist.count(lib) ||
              std::any_of(allowed.begin(), allowed.end(), [&](const std::string& p) { return glob_match(p, lib); }) ||
              shipped_and_reachable(b, lib, members);
    if (!ok)
      add(out, "P3", Severity::Strict, b.member, "needs " + lib + ", which " + policy->name + " does not provide",
          "a library on the policy whitelist, the allow-list, or shipped in the wheel via $ORIGIN");
  }
}

namespace {

bool has_marker(const std::vector<std::string>& kernels, const std::string& marker) {
  return std::any_of(kernels.begin(), kernels.end(),
                     [&](const std::string& n) { return n.find(marker) != std::string::npos; });
}

// An archs family at one capability of the wheel: SASS for each of its
// targets of that capability, exactly.
void check_exact_targets(const CudaCode& code, const std::string& family, const distinfo::BuiltFamily& k,
                         const Arch& arch, const std::string& member, Findings& out) {
  for (const auto& target_text : k.archs) {
    auto target = parse_arch(target_text);
    if (!target || !same_base_arch(arch, *target)) continue;
    std::string sm = target->sass();
    auto sass = code.sass_targets.find(target->code());
    if (sass != code.sass_targets.end() && has_marker(sass->second, k.symbol_marker)) continue;
    add(out, "B6", Severity::Error, member,
        "no " + family + " kernels for " + sm + " (no " + sm + " SASS with '" + k.symbol_marker +
            "'; arch-specific code has no PTX to fall back on)",
        sm + " SASS, as build_info.kernel_families." + family + ".archs promises for arch " + arch.name());
  }
}

}  // namespace

namespace {

// "sageattention/_fused.cpython-312-x86_64-linux-gnu.so" -> "_fused".
std::string module_stem(const std::string& member) {
  std::string leaf = member.substr(member.find_last_of('/') + 1);
  return leaf.substr(0, leaf.find('.'));
}

}  // namespace

void check_cuda_coverage(const CudaCode& code, const distinfo::BuildInfo& b, const std::string& member, Findings& out) {
  // A wheel of several extension modules (upstream's trees) names each
  // module's kernels as a family of the module's name: a module answers for
  // its own family only.  A family-per-kernel wheel (ours: one _C) answers
  // for all of them in its one module.
  std::string stem = module_stem(member);
  bool per_module = b.kernel_families.count(stem) > 0;
  for (const auto& arch_text : b.archs) {
    auto arch = parse_arch(arch_text);
    if (!arch) continue;  // not a capability: parse_build_info refuses such a record
    bool ptx_below = std::any_of(code.ptx.begin(), code.ptx.end(), [&](int p) { return p <= arch->sm; });
    auto sass = code.sass_kernels.find(arch->sm);
    for (const auto& [family, k] : b.kernel_families) {
      if (per_module && family != stem) continue;
      if (!k.archs.empty()) {
        check_exact_targets(code, family, k, *arch, member, out);
        continue;
      }
      auto min_arch = parse_arch(k.min_arch);
      if (min_arch && !arch_at_least(*arch, *min_arch)) continue;
      bool in_sass = sass != code.sass_kernels.end() && has_marker(sass->second, k.symbol_marker);
      if (!in_sass && !ptx_below)
        add(out, "B6", Severity::Error, member,
            "no " + family + " kernels for " + arch->sass() + " (no SASS with '" + k.symbol_marker +
                "', no PTX at or below it)",
            "SASS for " + arch->sass() + " or PTX <= it, as build_info.archs promises");
    }
  }
}

void check_cuda_runtime(const BinaryFacts& b, const distinfo::BuildInfo& info, Findings& out) {
  std::string major = info.cuda.version.substr(0, info.cuda.version.find('.'));
  for (const auto& lib : b.needed)
    if (lib.starts_with("libcudart.so.") && lib != "libcudart.so." + major)
      add(out, "B7", Severity::Error, b.member, "needs " + lib,
          "libcudart.so." + major + " (CUDA " + info.cuda.version + ")");
  std::string torch_major = info.torch.cuda.substr(0, info.torch.cuda.find('.'));
  if (torch_major != major)
    add(out, "B7", Severity::Error, b.member, "torch is built for CUDA " + info.torch.cuda,
        "the same CUDA major as the extension (" + info.cuda.version + ")");
}

void check_symbol_origins(const BinaryFacts& b, bool abi3, Findings& out) {
  std::vector<std::string> unknown;
  for (const auto& s : b.undefined) {
    if (s.weak || is_runtime_version(s.version) || is_torch_symbol(s.name) || is_cuda_symbol(s.name)) continue;
    bool python = s.name.starts_with("Py") || s.name.starts_with("_Py");
    if (python && abi3 && s.name.starts_with("_Py")) {
      add(out, "B9", Severity::Error, b.member, "abi3 extension uses private symbol " + s.name,
          "limited-API symbols only (no _Py*)");
      continue;
    }
    if (!python) unknown.push_back(s.name);
  }
  for (std::size_t i = 0; i < unknown.size() && i < 10; ++i)
    add(out, "B8", Severity::Error, b.member, "undefined symbol " + unknown[i] + " comes from no known library",
        "symbols from torch, CUDA, the C/C++ runtime or libpython only");
  if (unknown.size() > 10)
    add(out, "B8", Severity::Error, b.member, std::to_string(unknown.size() - 10) + " more unknown undefined symbols",
        "");
}

}  // namespace sb::verify
