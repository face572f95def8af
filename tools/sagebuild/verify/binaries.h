// Reads every binary a wheel carries (without extracting it), wherever it
// sits: each member whose first bytes are an ELF or PE image, and each member
// named as a library (.so, .pyd, .dll) whatever it holds.  The ELF and PE
// readers' facts go through the binary rules: P1-P3, P8, P9 for every wheel
// (a native executable in *.data/scripts/ with no library beside it too),
// B6-B9 for ours.  A binary the platform tag cannot speak for (an ELF image
// in a wheel with no Linux tag, a PE image in one with no Windows tag; in a
// wheel tagged `any`, an executable installed as a script) is P1/P9.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/binary/elf.h"
#include "sagebuild/binary/fatbin.h"
#include "sagebuild/common/finding.h"
#include "sagebuild/distinfo/build_info.h"
#include "sagebuild/verify/binary_rules.h"
#include "sagebuild/wheel/filename.h"

namespace sb::verify {

struct BinaryCheckInput {
  const std::filesystem::path& wheel_path;
  zip::Reader& zip;  // members are read through open_member(): its limits and refusals apply
  const wheel::WheelFilename& filename;
  const PolicyTable* policy;  // nullptr: P2/P3 skipped
  const std::vector<std::string>& allowed_libraries;
  const distinfo::BuildInfo* build_info;  // nullptr: not one of ours
};

// What the wheel's libraries say together, for the rules that judge the
// wheel as a whole.
struct WheelBinaries {
  std::size_t elf_libraries = 0;
  // How the libraries link torch: the one binding they show; nullopt when
  // none shows one (Windows images name only their DLLs) or they disagree.
  std::optional<wheel::TorchBinding> torch_binding;
};

WheelBinaries check_binaries(const BinaryCheckInput& in, Findings& out);

// The ELF reader's view of one library as the plain facts the rules take:
// distinct DT_NEEDED entries (at most kMaxNeeded) and rpaths (kMaxRpaths).
constexpr std::size_t kMaxNeeded = 1024, kMaxRpaths = 64;
BinaryFacts elf_facts(const binary::ElfFile& elf, const std::string& member);
// The fatbin reader's coverage per arch: SASS kernels by arch number, plain PTX archs.
CudaCode cuda_code(const binary::CudaCoverage& coverage);

}  // namespace sb::verify
