#include "sagebuild/fuzz/hostile_wheels.h"

#include <cstdint>

#include "sagebuild/archive/zip_test_util.h"

namespace sb::fuzz {

namespace {

using zip::testing::member;
using zip::testing::TestMember;

const char* kName = "sageattention-2.2.0-21100.130-cp310-abi3-linux_x86_64.whl";
const char* kDistInfo = "sageattention-2.2.0.dist-info";
const char* kBuildInfo = R"({"schema":1,"package":"sageattention","version":"2.2.0","abi_mode":"abi3",
 "pythons":["3.10","3.11","3.12","3.13","3.14"],"wheel":{"build_tag":"21100.130","local_version":null,
 "python_tag":"cp310","abi_tag":"abi3","platform_tag":"linux_x86_64"},
 "torch":{"version":"2.11.0","cxx11_abi":true,"cuda":"13.0"},"cuda":{"version":"13.0","nvcc":"13.0.88"},
 "archs":["9.0"],"ptx_archs":["9.0"],"kernel_families":{},"host_compiler":{"id":"gcc","version":"12.2.0"},
 "platform":"linux_x86_64","source_revision":"0123456789abcdef"})";

void put(std::string& s, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::string metadata(const std::string& extra = {}) {
  return "Metadata-Version: 2.4\nName: sageattention\nVersion: 2.2.0\nRequires-Python: >=3.10\n"
         "Requires-Dist: torch==2.11.0\n" +
         extra;
}

const char* kWheelFile =
    "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp310-abi3-linux_x86_64\nBuild: 21100.130\n";

// Our wheel's members (no RECORD: its absence is one R1 error, and every
// other rule still runs), plus `extra`.
std::string our_wheel(std::vector<TestMember> extra, const std::string& meta = metadata()) {
  std::string di = kDistInfo;
  std::vector<TestMember> m = {member("sageattention/__init__.py", "from . import _C\n"),
                               member("sageattention/build_info.json", kBuildInfo, true),
                               member(di + "/METADATA", meta, true), member(di + "/WHEEL", kWheelFile)};
  for (auto& e : extra) m.push_back(std::move(e));
  return zip::testing::build_zip({m});
}

HostileWheel with_extension(std::string label, std::string elf, std::string expect) {
  return {std::move(label), kName, our_wheel({member("sageattention/_C.abi3.so", std::move(elf), true)}),
          std::move(expect)};
}

// .nv_fatbin with `n` entries flagged LZ4, no payload, claiming 512 MiB
// (over the per-entry limit) and 32 MiB (under it, but from nothing) in turn.
std::string lying_fatbin(int n) {
  std::string entries;
  for (int i = 0; i < n; ++i) {
    std::string h;
    put(h, 2, 2);       // kind: cubin
    put(h, 0x0101, 2);  // version
    put(h, 64, 4);      // header size
    put(h, 0, 8);       // payload (padded): none
    put(h, 0, 4);       // compressed size
    put(h, 0, 4);
    put(h, 0, 2), put(h, 0, 2);  // minor, major
    put(h, 90, 4);               // arch
    put(h, 0, 4), put(h, 0, 4);
    put(h, 0x2000, 8);  // LZ4
    put(h, 0, 8);
    put(h, (i % 2 ? 32ull : 512ull) << 20, 8);  // uncompressed size claimed
    entries += h;
  }
  std::string c;
  put(c, 0xBA55ED50, 4);
  put(c, 1, 2);
  put(c, 16, 2);
  put(c, entries.size(), 8);
  return c + entries;
}

// `n` GNU property notes at alternating ends of an 8 MiB library: every
// note read is a backward seek in the deflated member.
std::string alternating_notes(int n) {
  std::vector<ElfSectionSpec> s = {{".padding", 1, std::string(8 << 20, '\0')}};
  for (int i = 0; i < n; ++i) s.push_back({".note.gnu.property", 7, "", 0, 0, 0, i % 2 ? (8 << 20) - 4096 : 4096, 32});
  return elf_shared_object(s);
}

// A .gnu.version_r entry whose version chain is longer than the whole budget.
std::string long_verneed_chain(int versions) {
  std::string strtab = std::string("\0libc.so.6\0GLIBC_2.2.5\0", 23);
  std::string vr;
  put(vr, 1, 2);         // vn_version
  put(vr, versions, 2);  // vn_cnt
  put(vr, 1, 4);         // vn_file -> "libc.so.6"
  put(vr, 16, 4);        // vn_aux
  put(vr, 0, 4);         // vn_next: last
  for (int i = 0; i < versions; ++i) {
    put(vr, 0x09691a75, 4);   // vna_hash
    put(vr, 0, 2);            // vna_flags
    put(vr, 2 + i % 100, 2);  // vna_other
    put(vr, 11, 4);           // vna_name -> "GLIBC_2.2.5"
    put(vr, i + 1 < versions ? 16 : 0, 4);
  }
  // Sections: 2 = .dynstr, 3 = .gnu.version_r (info: 3 entries claimed).
  return elf_shared_object({{".dynstr", 3, strtab}, {".gnu.version_r", 0x6ffffffe, vr, 2, 3}});
}

// `n` dynamic symbols that all name the same 64 KiB string without a NUL.
std::string symbols_naming_one_long_string(int n) {
  std::string strtab(64 * 1024, 'a');
  std::string syms(24, '\0');  // the null symbol
  for (int i = 0; i < n; ++i) {
    put(syms, 0, 4);  // st_name -> the long string
    syms += '\x12';   // global function
    syms += '\0';
    put(syms, 0, 2);  // undefined
    put(syms, 0, 8), put(syms, 0, 8);
  }
  return elf_shared_object({{".dynstr", 3, strtab}, {".dynsym", 11, syms, 2, 1, 24}});
}

// `needed` DT_NEEDED entries and an RPATH of `rpaths` "$ORIGIN" entries:
// P3 pairs each library with each rpath and looks the result up among the
// members (a manylinux claim with the policy tables at hand).
std::string needed_times_rpaths(int needed, int rpaths) {
  std::string strtab(1, '\0');
  std::string dynamic;
  for (int i = 0; i < needed; ++i) {
    put(dynamic, 1, 8);  // DT_NEEDED
    put(dynamic, strtab.size(), 8);
    strtab += "libx" + std::to_string(i) + ".so" + '\0';
  }
  put(dynamic, 15, 8);  // DT_RPATH
  put(dynamic, strtab.size(), 8);
  for (int i = 0; i < rpaths; ++i) strtab += i ? ":$ORIGIN/d" + std::to_string(i) : "$ORIGIN";
  strtab += '\0';
  put(dynamic, 0, 16);  // DT_NULL
  return elf_shared_object({{".dynstr", 3, strtab}, {".dynamic", 6, dynamic, 1, 0, 16}});
}

std::string lines(const std::string& line, std::size_t count) {
  std::string s;
  s.reserve(line.size() * count);
  for (std::size_t i = 0; i < count; ++i) s += line;
  return s;
}

}  // namespace

std::string elf_shared_object(const std::vector<ElfSectionSpec>& sections) {
  std::string shstrtab(1, '\0');
  std::vector<std::uint32_t> names;
  for (const auto& s : sections) {
    names.push_back(static_cast<std::uint32_t>(shstrtab.size()));
    shstrtab += s.name + '\0';
  }
  std::uint32_t shstr_name = static_cast<std::uint32_t>(shstrtab.size());
  shstrtab += std::string(".shstrtab") + '\0';
  std::string body;
  std::vector<std::uint64_t> offsets;
  for (const auto& s : sections) {
    offsets.push_back(64 + body.size());
    body += s.data;
  }
  std::uint64_t shstr_offset = 64 + body.size();
  body += shstrtab;
  std::uint64_t shoff = 64 + body.size();
  std::uint64_t shnum = sections.size() + 2;
  std::string out;
  out +=
      "\x7f"
      "ELF";
  out += '\x02', out += '\x01', out += '\x01';
  out += std::string(9, '\0');
  put(out, 3, 2);   // ET_DYN
  put(out, 62, 2);  // x86-64
  put(out, 1, 4);
  put(out, 0, 8);  // entry
  put(out, 0, 8);  // phoff
  put(out, shoff, 8);
  put(out, 0, 4);                  // flags
  put(out, 64, 2);                 // ehsize
  put(out, 0, 2), put(out, 0, 2);  // phentsize, phnum
  put(out, 64, 2);                 // shentsize
  put(out, shnum, 2);
  put(out, shnum - 1, 2);  // shstrndx: last
  out += body;
  auto header = [&](std::uint32_t name, std::uint32_t type, std::uint64_t offset, std::uint64_t size,
                    std::uint32_t link, std::uint32_t info, std::uint64_t entsize) {
    put(out, name, 4);
    put(out, type, 4);
    put(out, 0, 8);  // flags
    put(out, 0, 8);  // addr
    put(out, offset, 8);
    put(out, size, 8);
    put(out, link, 4);
    put(out, info, 4);
    put(out, 1, 8);  // addralign
    put(out, entsize, 8);
  };
  header(0, 0, 0, 0, 0, 0, 0);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const auto& s = sections[i];
    std::uint64_t at = s.at >= 0 ? static_cast<std::uint64_t>(s.at) : offsets[i];
    std::uint64_t size = s.size >= 0 ? static_cast<std::uint64_t>(s.size) : s.data.size();
    header(names[i], s.type, at, size, s.link, s.info, s.entsize);
  }
  header(shstr_name, 3, shstr_offset, shstrtab.size(), 0, 0, 0);
  return out;
}

std::vector<HostileWheel> hostile_wheels() {
  std::string di = kDistInfo;
  std::vector<HostileWheel> w;
  w.push_back(with_extension("fatbin-claims-512MiB", elf_shared_object({{".nv_fatbin", 1, lying_fatbin(1000)}}),
                             "more than 256 times as many"));
  w.push_back(with_extension("notes-at-alternating-ends", alternating_notes(20000), ".note.gnu.property sections"));
  w.push_back(with_extension("verneed-chain-past-the-budget", long_verneed_chain(20000),
                             ".gnu.version_r holds more than 10000 entries"));
  w.push_back(with_extension("symbols-naming-one-long-string", symbols_naming_one_long_string(400'000),
                             "the ELF's tables and names need more than"));
  {
    std::vector<TestMember> members = {member("sageattention/_C.abi3.so", needed_times_rpaths(20'000, 5'000), true)};
    for (int i = 0; i < 20'000; ++i) members.push_back(member("sageattention/m" + std::to_string(i), ""));
    w.push_back({"needed-times-rpaths", "sageattention-2.2.0-21100.130-cp310-abi3-manylinux_2_28_x86_64.whl",
                 our_wheel(std::move(members)), "20000 DT_NEEDED entries and"});
  }
  w.push_back({"entry-points-flood", kName,
               our_wheel({member(di + "/entry_points.txt", lines("a\n", 5'000'000), true)}),
               "more findings not shown (E1: "});
  w.push_back({"record-4MB-line", kName,
               our_wheel({member(di + "/RECORD", std::string(4 << 20, 'x') + ",sha256=,1\n", true)}), "R3"});
  w.push_back({"record-30MB-nul", kName, our_wheel({member(di + "/RECORD", std::string(30 << 20, '\0'), true)}), "R2"});
  {
    std::vector<TestMember> dirs;
    for (int i = 0; i < 20'000; ++i) dirs.push_back(member("d" + std::to_string(i) + ".data/x", ""));
    w.push_back({"data-dirs-20k", kName, our_wheel(std::move(dirs)), "20000 top-level .data directories"});
  }
  w.push_back({"names-not-utf8", kName,
               our_wheel({member("sageattention/\xff\xfe\xc0\xaf.py", "x"), member("sageattention/a\xd0", "y")}),
               "\\xff\\xfe\\xc0\\xaf"});
  w.push_back({"requires-dist-a-million-parens", kName,
               our_wheel({}, metadata("Requires-Dist: x; " + std::string(1'000'000, '(') + "\n")),
               "at most 64 nested parentheses"});
  {
    std::vector<TestMember> licenses;
    for (int i = 0; i < 20'000; ++i) licenses.push_back(member(di + "/licenses/L" + std::to_string(i), ""));
    w.push_back({"license-files-50k", kName,
                 our_wheel(std::move(licenses), metadata(lines("License-File: missing\n", 50'000))), "M7"});
  }
  return w;
}

}  // namespace sb::fuzz
