#include "sagebuild/verify/binaries.h"

#include <algorithm>
#include <unordered_set>

#include "sagebuild/archive/member_source.h"
#include "sagebuild/binary/elf.h"
#include "sagebuild/binary/fatbin.h"
#include "sagebuild/binary/pe.h"
#include "sagebuild/verify/layout.h"
#include "sagebuild/verify/manylinux_level.h"

namespace sb::verify {

namespace {

// The distinct values of `v`, in order of appearance, at most `cap` of them:
// the rules pair every DT_NEEDED with every rpath, and a hostile library
// lists thousands of each (real ones: a few dozen and one or two).
std::vector<std::string> distinct(const std::vector<std::string>& v, std::size_t cap) {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  for (const auto& x : v)
    if (out.size() < cap && seen.insert(x).second) out.push_back(x);
  return out;
}

}  // namespace

BinaryFacts elf_facts(const binary::ElfFile& elf, const std::string& member) {
  const auto& info = elf.info();
  BinaryFacts f;
  f.member = member;
  f.machine = info.ident.machine;
  f.needed = distinct(info.needed, kMaxNeeded);
  std::vector<std::string> rpaths = info.rpath;
  rpaths.insert(rpaths.end(), info.runpath.begin(), info.runpath.end());
  f.rpaths = distinct(rpaths, kMaxRpaths);
  for (const auto& v : info.version_needs) f.verneed.push_back({v.file, v.versions});
  for (const auto* s : elf.undefined_symbols())
    f.undefined.push_back({s->name, s->version, s->binding == binary::SymbolBinding::Weak});
  return f;
}

CudaCode cuda_code(const binary::CudaCoverage& coverage) {
  CudaCode code;
  for (const auto& [kernel, archs] : coverage.kernels)
    for (const auto& a : archs.sass) {
      code.sass_kernels[static_cast<int>(a.number)].push_back(kernel);
      code.sass_targets[a.str()].push_back(kernel);
    }
  for (const auto& e : coverage.entries)  // only plain PTX JIT-compiles for every later arch
    if (e.kind == binary::FatbinKind::Ptx && e.arch.variant == 0) code.ptx.insert(static_cast<int>(e.arch.number));
  return code;
}

namespace {

bool is_elf_candidate(const zip::Entry& e) {
  // An installed script may be a native executable: read when it is ELF.
  return !e.is_directory() && !e.is_encrypted() && (is_native_library(e.name) || is_installed_script(e.name)) &&
         e.name.find(".pyd") == std::string::npos && e.name.find(".dll") == std::string::npos &&
         e.name.find(".dylib") == std::string::npos;
}

// The binary readers' own findings (P8 malformed ELF/PE, P12 malformed CUDA
// fatbin) concern the member they read.  Their warnings (a stripped .symtab,
// normal for a release build) stay out of the report.
void surface_reader_findings(const Findings& found, const std::string& member, Findings& out) {
  for (Finding f : found) {
    if (f.severity == Severity::Warning) continue;
    f.member = member;
    out.keep(std::move(f));
  }
}

void check_one(const BinaryCheckInput& in, binary::ElfFile& elf, const BinaryFacts& facts,
               const std::vector<std::string>& members, Findings& out) {
  for (const auto& platform : in.filename.platform_tags) {
    check_machine(facts, platform, out);
    std::string arch;
    const ManylinuxPolicy* policy = in.policy ? in.policy->for_platform(platform, &arch) : nullptr;
    if (policy) check_symbol_versions(facts, *policy, arch, out);
    check_needed_libraries(facts, policy, in.allowed_libraries, members, out);
  }
  if (in.build_info) {
    check_cuda_runtime(facts, *in.build_info, out);
    check_symbol_origins(facts, in.build_info->abi_mode == wheel::AbiMode::abi3, out);
    if (elf.section(".nv_fatbin")) {
      Findings fatbin;  // P12: a fatbin the reader could not walk
      check_cuda_coverage(cuda_code(binary::cuda_coverage(elf, fatbin)), *in.build_info, facts.member, out);
      surface_reader_findings(fatbin, facts.member, out);
    } else if (!in.build_info->archs.empty()) {
      add(out, "B6", Severity::Error, facts.member, "no CUDA code (.nv_fatbin) in the extension",
          "kernels for build_info.archs");
    }
  }
}

bool is_pe_candidate(const zip::Entry& e) {
  auto ends = [&](std::string_view suffix) {
    return e.name.size() >= suffix.size() && e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return !e.is_directory() && !e.is_encrypted() &&
         (ends(".pyd") || ends(".dll") || (ends(".exe") && is_installed_script(e.name)));
}

// Windows images: P9 machine vs tag; for our wheels B7 (cudart major) and B6
// (CUDA coverage from the `.nv_fatb` section nvcc writes on Windows).
void check_pe(const BinaryCheckInput& in, binary::ByteSource& source, const std::string& member, Findings& out) {
  Findings structure;
  auto pe = binary::PeFile::parse(source, structure);
  if (!pe) {
    // Not a PE image.  In another project's wheel a .dll/.pyd may be anything
    // (nothing Windows-specific to judge); in ours (a build-info) it is the
    // extension, and a .pyd Windows cannot load is the reader's P8 error.
    if (in.build_info) surface_reader_findings(structure, member, out);
    return;
  }
  surface_reader_findings(structure, member, out);
  const auto& info = pe->info();
  for (const auto& platform : in.filename.platform_tags) check_pe_machine(member, info.platform, platform, out);
  if (!in.build_info) return;
  std::vector<std::string> imports = info.imports;
  imports.insert(imports.end(), info.delay_imports.begin(), info.delay_imports.end());
  check_pe_cuda_runtime(member, imports, *in.build_info, out);
  const binary::PeSection* fat = pe->section(".nv_fatb");
  if (!fat) {
    if (!in.build_info->archs.empty())
      add(out, "B6", Severity::Error, member, "no CUDA code (.nv_fatb) in the extension",
          "kernels for build_info.archs");
    return;
  }
  Findings fatbin;
  auto cov = binary::cuda_coverage_of(source, fat->raw_offset, fat->raw_size, fatbin);
  check_cuda_coverage(cuda_code(cov), *in.build_info, member, out);
  surface_reader_findings(fatbin, member, out);
}

// Reads the member source refused (its decompression budget spent by an
// access pattern, corrupt data): the reader's findings say what was left
// unread, this says why.
void surface_source_error(const binary::ByteSource& source, const std::string& member, Findings& out) {
  const auto* ms = dynamic_cast<const zip::MemberSource*>(&source);
  if (ms && !ms->error().empty())
    add(out, "P8", Severity::Error, member, "reading the library: " + ms->error(),
        "a library whose tables can be read in a bounded number of passes");
}

// A member the reader refuses (overlapping, encrypted ...) already has its
// Z finding; it is not read again here.
std::unique_ptr<binary::ByteSource> open(const BinaryCheckInput& in, std::size_t i) {
  std::string ignored;
  return in.zip.open_member(i, ignored);
}

}  // namespace

WheelBinaries check_binaries(const BinaryCheckInput& in, Findings& out) {
  std::vector<std::string> members;
  for (const auto& e : in.zip.entries()) members.push_back(e.name);
  std::sort(members.begin(), members.end());  // check_needed_libraries searches it
  // Every ELF64 library, for the wheel's manylinux level: its symbol versions
  // and libraries (its undefined symbols are judged per library, then dropped).
  std::vector<BinaryFacts> elves;
  std::vector<std::optional<wheel::TorchBinding>> bindings;
  const auto& entries = in.zip.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    if (is_pe_candidate(e)) {
      if (auto source = open(in, i)) {
        check_pe(in, *source, e.name, out);
        surface_source_error(*source, e.name, out);
      }
      continue;
    }
    if (!is_elf_candidate(e)) continue;
    auto source = open(in, i);
    if (!source) continue;
    auto ident = binary::identify_elf(*source);
    if (!ident.is_elf) {
      // In our wheels (a build-info) the .so is the extension: one Linux
      // cannot load is a P8 error, as a .pyd that is no PE image is.
      if (in.build_info) add(out, "P8", Severity::Error, e.name, "not an ELF image", "the linked extension, ELF64");
      continue;
    }
    Findings structure;  // P8: what the ELF reader found malformed
    auto elf = binary::ElfFile::parse(*source, structure);
    if (!elf) {  // another ELF flavour (32-bit, big-endian): its machine is still known
      BinaryFacts only_machine{e.name, ident.machine, {}, {}, {}, {}};
      for (const auto& platform : in.filename.platform_tags) check_machine(only_machine, platform, out);
      continue;
    }
    surface_reader_findings(structure, e.name, out);  // problems inside a readable ELF64
    BinaryFacts facts = elf_facts(*elf, e.name);
    if (facts.needed.size() == kMaxNeeded || facts.rpaths.size() == kMaxRpaths)
      add(out, "P8", Severity::Error, e.name,
          std::to_string(elf->info().needed.size()) + " DT_NEEDED entries and " +
              std::to_string(elf->info().rpath.size() + elf->info().runpath.size()) + " rpaths: only the first " +
              std::to_string(kMaxNeeded) + " and " + std::to_string(kMaxRpaths) + " distinct ones are checked",
          "a library of ordinary shape");
    check_one(in, *elf, facts, members, out);
    surface_source_error(*source, e.name, out);
    bindings.push_back(torch_binding(facts));
    facts.undefined = {};
    elves.push_back(std::move(facts));
  }
  if (in.policy)
    check_platform_levels(elves, in.filename.platform_tags, {*in.policy, in.allowed_libraries, members}, out);
  WheelBinaries summary{elves.size(), std::nullopt};
  bool disagree = false;
  for (const auto& b : bindings) {
    if (!b) continue;
    disagree |= summary.torch_binding && *summary.torch_binding != *b;
    summary.torch_binding = b;
  }
  if (disagree) summary.torch_binding.reset();
  return summary;
}

}  // namespace sb::verify
