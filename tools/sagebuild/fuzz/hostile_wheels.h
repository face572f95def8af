// Hostile wheels, generated: small files that claim or hold what once took
// verify minutes or gigabytes (../shared/fuzz-findings/README.md), rebuilt
// here so the regression does not depend on that folder, and a few more of
// the same kinds.  Each is named like one of our wheels, with a valid
// build_info.json, so every rule (the binary and CUDA ones included) runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sb::fuzz {

struct HostileWheel {
  std::string label;     // "fatbin-claims-512MiB" ...
  std::string filename;  // the wheel's file name
  std::string bytes;     // the whole file
  std::string expect;    // a finding the report must carry ("P12", "Z6 ... \\xff" ...)
};

std::vector<HostileWheel> hostile_wheels();

// A minimal ELF64 x86-64 shared object with the given sections (after the
// null section and before .shstrtab), their data laid out back to back.
// `at` and `size` override what a header says (overlapping and alternating
// tables); -1 keeps where and how long the data is.
struct ElfSectionSpec {
  std::string name;
  std::uint32_t type = 1;  // SHT_PROGBITS
  std::string data;
  std::uint32_t link = 0, info = 0;
  std::uint64_t entsize = 0;
  std::int64_t at = -1;
  std::int64_t size = -1;
};
std::string elf_shared_object(const std::vector<ElfSectionSpec>& sections);

}  // namespace sb::fuzz
