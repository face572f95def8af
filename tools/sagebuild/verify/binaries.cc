#include "sagebuild/verify/binaries.h"

#include "sagebuild/archive/member_source.h"
#include "sagebuild/binary/elf.h"
#include "sagebuild/verify/layout.h"

namespace sb::verify {

std::optional<BinaryFacts> read_elf_facts(binary::ByteSource& source, const std::string& member) {
  Findings ignored;  // structural problems: the rules below judge what could be read
  auto elf = binary::ElfFile::parse(source, ignored);
  if (!elf) return std::nullopt;
  const auto& info = elf->info();
  BinaryFacts f;
  f.member = member;
  f.machine = info.ident.machine;
  f.needed = info.needed;
  f.rpaths = info.rpath;
  f.rpaths.insert(f.rpaths.end(), info.runpath.begin(), info.runpath.end());
  for (const auto& v : info.version_needs) f.verneed.push_back({v.file, v.versions});
  for (const auto* s : elf->undefined_symbols())
    f.undefined.push_back({s->name, s->version, s->binding == binary::SymbolBinding::Weak});
  return f;
}

namespace {

bool is_elf_candidate(const zip::Entry& e) {
  return !e.is_directory() && !e.is_encrypted() && is_native_library(e.name) && e.name.find(".pyd") == std::string::npos &&
         e.name.find(".dll") == std::string::npos && e.name.find(".dylib") == std::string::npos;
}

void check_one(const BinaryCheckInput& in, const BinaryFacts& facts, const std::vector<std::string>& members,
               Findings& out) {
  for (const auto& platform : in.filename.platform_tags) {
    check_machine(facts, platform, out);
    std::string arch;
    const ManylinuxPolicy* policy = in.policy ? in.policy->for_platform(platform, &arch) : nullptr;
    if (policy) check_symbol_versions(facts, *policy, arch, out);
    check_needed_libraries(facts, policy, in.allowed_libraries, members, out);
  }
  if (in.build_info) {
    check_cuda_runtime(facts, *in.build_info, out);
    check_symbol_origins(facts, in.build_info->abi_mode == "abi3", out);
  }
}

}  // namespace

void check_binaries(const BinaryCheckInput& in, Findings& out) {
  std::vector<std::string> members;
  for (const auto& e : in.zip.entries()) members.push_back(e.name);
  std::unique_ptr<binary::FileSource> file;
  for (const auto& e : in.zip.entries()) {
    if (!is_elf_candidate(e)) continue;
    if (!file) file = binary::FileSource::open(in.wheel_path);
    zip::MemberSource source(*file, e, zip::StreamLimits{});
    auto ident = binary::identify_elf(source);
    if (!ident.is_elf) continue;
    auto facts = read_elf_facts(source, e.name);
    if (!facts) {  // another ELF flavour: its machine is still known
      BinaryFacts only_machine{e.name, ident.machine, {}, {}, {}, {}};
      for (const auto& platform : in.filename.platform_tags) check_machine(only_machine, platform, out);
      continue;
    }
    check_one(in, *facts, members, out);
  }
}

}  // namespace sb::verify
