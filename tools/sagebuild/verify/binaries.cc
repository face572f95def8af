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

// What a member's first bytes say it is.  Every member is looked at, wherever
// it sits (a native executable in *.data/scripts/, a library renamed .bin):
// a wheel's platform tag speaks for every binary it carries.
enum class Magic { none, elf, pe };

Magic sniff(binary::ByteSource& source) {
  unsigned char head[4] = {};
  if (source.size() < 4 || !source.read(0, head, 4)) return Magic::none;
  if (head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F') return Magic::elf;
  if (head[0] == 'M' && head[1] == 'Z') return Magic::pe;
  return Magic::none;
}

bool ends_with_any(const std::string& name, std::initializer_list<std::string_view> suffixes) {
  for (auto suffix : suffixes)
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  return false;
}

bool is_linux_tag(const std::string& tag) {
  using F = wheel::PlatformFamily;
  auto f = wheel::classify_platform(tag).family;
  return f == F::Linux || f == F::Manylinux || f == F::Musllinux;
}

bool is_windows_tag(const std::string& tag) {
  return wheel::classify_platform(tag).family == wheel::PlatformFamily::Windows;
}

// A binary the platform tag cannot speak for: an ELF image in a wheel with no
// Linux tag, a PE image in one with no Windows tag.  In a wheel tagged `any`
// only an installed script is held to it (pip puts it on PATH everywhere);
// elsewhere such a wheel may carry binaries as data (setuptools' launchers).
void check_binary_kind(const BinaryCheckInput& in, const std::string& member, Magic kind, Findings& out) {
  const auto& tags = in.filename.platform_tags;
  bool any = std::find(tags.begin(), tags.end(), "any") != tags.end();
  if (any && !is_installed_script(member)) return;
  bool fits = std::any_of(tags.begin(), tags.end(), kind == Magic::elf ? is_linux_tag : is_windows_tag);
  if (fits) return;
  std::string joined;
  for (const auto& t : tags) joined += (joined.empty() ? "" : ".") + t;
  if (kind == Magic::elf)
    add(out, "P1", Severity::Strict, member, "an ELF image (a Linux binary) in a wheel tagged " + joined,
        "binaries for the platform tag, or a linux/manylinux tag for this one");
  else
    add(out, "P9", Severity::Strict, member, "a PE image (a Windows binary) in a wheel tagged " + joined,
        "binaries for the platform tag, or a win_* tag for this one");
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
    if (e.is_directory() || e.is_encrypted()) continue;
    auto source = open(in, i);
    if (!source) continue;
    Magic kind = sniff(*source);
    bool named_pe = ends_with_any(e.name, {".pyd", ".dll"});
    bool named_elf = is_native_library(e.name) && !named_pe && !ends_with_any(e.name, {".dylib"});
    if (kind == Magic::pe || named_pe) {
      // A .pyd/.dll is a Windows image whatever it holds (check_pe says
      // when it is not one); any other file is one when it parses as one
      // (a text file may start with "MZ").
      Findings probe;
      if (!named_pe && !binary::PeFile::parse(*source, probe)) continue;
      check_binary_kind(in, e.name, Magic::pe, out);
      check_pe(in, *source, e.name, out);
      surface_source_error(*source, e.name, out);
      continue;
    }
    if (kind != Magic::elf) {
      // In our wheels (a build-info) the .so is the extension: one Linux
      // cannot load is a P8 error, as a .pyd that is no PE image is.
      if (named_elf && in.build_info)
        add(out, "P8", Severity::Error, e.name, "not an ELF image", "the linked extension, ELF64");
      continue;
    }
    check_binary_kind(in, e.name, Magic::elf, out);
    auto ident = binary::identify_elf(*source);
    Findings structure;  // P8: what the ELF reader found malformed
    auto elf = binary::ElfFile::parse(*source, structure);
    if (!elf) {
      // ELF64 little-endian the reader could not read (a truncated header):
      // malformed, P8.  Another flavour (32-bit, big-endian): its machine is
      // still known and judged.
      if (ident.is_64 && ident.little_endian) surface_reader_findings(structure, e.name, out);
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
