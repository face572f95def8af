// The manylinux level of real binaries: tiny libraries compiled here with the
// system's gcc against this machine's glibc ([posix]: the Linux host's gcc),
// each calling one function whose symbol version glibc introduced in a known
// release, then packed into wheels whose platform tags claim more, less or no
// level.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "sagebuild/binary/byte_source.h"
#include "sagebuild/binary/elf.h"
#include "sagebuild/common/corpus_test.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/pack/wheel_writer.h"
#include "sagebuild/verify/binaries.h"
#include "sagebuild/verify/manylinux_level.h"
#include "sagebuild/verify/verify.h"

using namespace sb;
using namespace sb::verify;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("sb-level-" + std::to_string(sb::process_id()) + "-" + std::to_string(next()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  static int next() {
    static int n = 0;
    return n++;
  }
};

// A shared library compiled from `source` ("c" or "c++"); empty when the
// compiler is missing or fails (the caller says which).
std::string compile(const std::string& source, const std::string& language, const std::string& flags = "") {
  TempDir dir;
  std::string ext = language == "c++" ? ".cc" : ".c";
  write_file_atomic(dir.path / ("m" + ext), source);
  std::string cmd = std::string(language == "c++" ? "g++" : "gcc") + " -shared -fPIC -O1 " + flags + " " +
                    (dir.path / ("m" + ext)).string() + " -o " + (dir.path / "m.so").string() + " 2>&1";
  return std::system(cmd.c_str()) == 0 ? read_file(dir.path / "m.so") : std::string();
}

// One function each, and the newest glibc symbol version it makes the
// library need (glibc's own Versions files: clock_gettime moved into libc in
// 2.17, fcntl64 is 2.28, pthread_create moved into libc in 2.34, arc4random
// is new in 2.36).
struct Sample {
  const char* name;
  const char* source;
  const char* flags;
  const char* needs;  // the symbol version that sets the level
  const char* level;  // the oldest manylinux level allowing it (the policy data)
};
const Sample kSamples[] = {
    {"strlen", "#include <string.h>\nint f(const char* s) { return (int)strlen(s); }\n", "", "GLIBC_2.2.5",
     "manylinux_2_5"},
    {"clock_gettime",
     "#include <time.h>\nlong f(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec; }\n",
     "", "GLIBC_2.17", "manylinux_2_17"},
    {"fcntl64", "#include <fcntl.h>\nint f(int fd) { return fcntl(fd, F_GETFL); }\n", "-D_FILE_OFFSET_BITS=64",
     "GLIBC_2.28", "manylinux_2_28"},
    {"pthread_create",
     "#include <pthread.h>\nstatic void* g(void* p) { return p; }\nint f(void) { pthread_t t; return "
     "pthread_create(&t, 0, g, 0); }\n",
     "", "GLIBC_2.34", "manylinux_2_34"},
    {"arc4random", "#include <stdlib.h>\nunsigned f(void) { return arc4random(); }\n", "", "GLIBC_2.36",
     "manylinux_2_36"},
};

BinaryFacts facts_of(const std::string& bytes, const std::string& member) {
  binary::MemorySource source(bytes);
  Findings structure;
  auto elf = binary::ElfFile::parse(source, structure);
  REQUIRE(elf);
  return elf_facts(*elf, member);
}

bool needs_version(const BinaryFacts& b, const std::string& version) {
  for (const auto& need : b.verneed)
    for (const auto& v : need.versions)
      if (v == version) return true;
  return false;
}

const std::vector<std::string> kNoMembers;
const std::vector<std::string> kAllowed = Options{}.allowed_libraries;  // torch's and CUDA's libraries
LevelContext context() { return {PolicyTable::embedded(), kAllowed, kNoMembers}; }

// A wheel holding `library` as pkg/_native.so, tagged `platform`.
fs::path wheel_with(const std::string& library, const std::string& platform, const TempDir& dir) {
  pack::WheelSpec s;
  s.name = "levels";
  s.version = *wheel::parse_version("1.0");
  s.tags = {{"py3"}, {"none"}, {platform}};
  s.summary = "manylinux level samples";
  std::vector<pack::PayloadFile> payload = {{"levels/__init__.py", std::string(""), std::nullopt},
                                            {"levels/_native.so", library, std::nullopt}};
  return pack::write_wheel(s, payload, {dir.path, 0}).path;
}

std::vector<Finding> p2(const Report& r) {
  std::vector<Finding> out;
  for (const auto& f : r.findings)
    if (f.rule == "P2") out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("manylinux level: each glibc symbol version sets the level the policy names", "[posix]") {
  for (const auto& s : kSamples) {
    INFO(s.name << " needs " << s.needs);
    std::string bytes = compile(s.source, "c", s.flags);
    if (bytes.empty()) FAIL("gcc could not build the sample (install gcc)");
    BinaryFacts b = facts_of(bytes, "levels/_native.so");
    // The machine's glibc (Debian 12: 2.36) must be new enough to have given
    // the symbol its version; an older one builds an older binary.
    REQUIRE(needs_version(b, s.needs));
    const ManylinuxPolicy* level = oldest_level({b}, "x86_64", context());
    REQUIRE(level);
    CHECK(level->name == s.level);
  }
}

TEST_CASE("manylinux level: C++ runtime versions count too (GLIBCXX, CXXABI)", "[posix]") {
  std::string bytes =
      compile("#include <string>\nstd::string f(const char* s) { return std::string(s) + \"x\"; }\n", "c++");
  if (bytes.empty()) FAIL("g++ could not build the sample (install g++)");
  BinaryFacts b = facts_of(bytes, "levels/_native.so");
  REQUIRE(needs_version(b, "GLIBCXX_3.4.21"));  // std::__cxx11::basic_string: libstdc++ 5
  const ManylinuxPolicy* level = oldest_level({b}, "x86_64", context());
  REQUIRE(level);
  CHECK(level->name == "manylinux_2_24");  // manylinux_2_17 allows GLIBCXX up to 3.4.19
  auto why = unmet(b, *PolicyTable::embedded().for_platform("manylinux_2_17_x86_64"), "x86_64", context());
  CHECK(std::find(why.begin(), why.end(), "needs GLIBCXX_3.4.21 from libstdc++.so.6, outside manylinux_2_17") !=
        why.end());
}

TEST_CASE("manylinux level: the newest need of all binaries decides; a foreign library fits none", "[posix]") {
  BinaryFacts old = facts_of(compile(kSamples[1].source, "c"), "levels/a.so");
  BinaryFacts young = facts_of(compile(kSamples[3].source, "c"), "levels/b.so");
  CHECK(oldest_level({old, young}, "x86_64", context())->name == "manylinux_2_34");
  young.needed.push_back("libfoo.so.1");
  CHECK(oldest_level({old, young}, "x86_64", context()) == nullptr);
  young.needed.back() = "libtorch_cpu.so";  // torch's, on the allow-list
  CHECK(oldest_level({old, young}, "x86_64", context())->name == "manylinux_2_34");
}

TEST_CASE("manylinux level: verify flags a tag claiming less than the binary needs", "[posix]") {
  std::string bytes = compile(kSamples[3].source, "c");  // GLIBC_2.34
  if (bytes.empty()) FAIL("gcc could not build the sample (install gcc)");
  TempDir dir;
  Report low = verify_wheel(wheel_with(bytes, "manylinux_2_28_x86_64", dir), Options{});
  INFO(format_human(low, false));
  auto found = p2(low);
  REQUIRE(found.size() == 2);  // the version outside the policy, and the level the binary needs
  CHECK(found[0].severity == Severity::Strict);
  CHECK(found[0].message == "needs GLIBC_2.34 from libc.so.6, outside manylinux_2_28");
  CHECK(found[1].severity == Severity::Strict);
  CHECK(found[1].message ==
        "platform tag manylinux_2_28_x86_64 claims manylinux_2_28, but the binaries need manylinux_2_34");
  CHECK(found[1].expected.find("manylinux_2_34_x86_64") != std::string::npos);
  CHECK(low.failed(false));

  TempDir dir2;
  Report exact = verify_wheel(wheel_with(bytes, "manylinux_2_34_x86_64", dir2), Options{});
  INFO(format_human(exact, false));
  CHECK(p2(exact).empty());
  CHECK_FALSE(exact.failed(false));
}

TEST_CASE("manylinux level: the tag a build derives is the one verify accepts", "[posix]") {
  std::string bytes = compile(kSamples[3].source, "c");  // GLIBC_2.34
  if (bytes.empty()) FAIL("gcc could not build the sample (install gcc)");
  TempDir dir;
  write_file_atomic(dir.path / "m.so", bytes);
  std::vector<NamedLibrary> libs = {{dir.path / "m.so", "levels/_native.so"}};
  std::vector<std::string> members = {"levels/_native.so", "levels/__init__.py"};
  DerivedTag tag = derive_platform_tag("linux_x86_64", libs, members, Options{});
  CHECK(tag.tag == "manylinux_2_34_x86_64");
  CHECK(tag.why.rfind("manylinux_2_34_x86_64, the oldest level the binaries satisfy (", 0) == 0);
  CHECK(tag.why.find("needs GLIBC_2.34 from libc.so.6") != std::string::npos);
  TempDir wheel_dir;
  Report r = verify_wheel(wheel_with(bytes, tag.tag, wheel_dir), Options{});
  INFO(format_human(r, false));
  CHECK(p2(r).empty());
  CHECK_FALSE(r.failed(false));

  // Not Linux: unchanged.  No ELF library: unchanged (verify's P8 judges the file).
  CHECK(derive_platform_tag("win_amd64", {}, members, Options{}).tag == "win_amd64");
  write_file_atomic(dir.path / "text.so", "not a library");
  CHECK(derive_platform_tag("linux_x86_64", {{dir.path / "text.so", "levels/t.so"}}, members, Options{}).tag ==
        "linux_x86_64");
}

TEST_CASE("manylinux level: no level fits a library needing one outside the policy: the tag stays linux", "[posix]") {
  TempDir dir;
  std::string foo = compile("int g(void) { return 1; }\n", "c", "-Wl,-soname,libfoo.so.1");
  if (foo.empty()) FAIL("gcc could not build the sample (install gcc)");
  write_file_atomic(dir.path / "libfoo.so", foo);
  std::string bytes = compile("int g(void);\nint f(void) { return g(); }\n", "c",
                              "-Wl,--no-as-needed -L" + dir.path.string() + " -lfoo");
  REQUIRE_FALSE(bytes.empty());
  write_file_atomic(dir.path / "m.so", bytes);
  std::vector<std::string> members = {"levels/_native.so"};
  DerivedTag tag = derive_platform_tag("linux_x86_64", {{dir.path / "m.so", "levels/_native.so"}}, members, Options{});
  CHECK(tag.tag == "linux_x86_64");
  CHECK(tag.why.rfind("no manylinux level fits: ", 0) == 0);
  CHECK(tag.why.find("libfoo.so.1") != std::string::npos);
}

TEST_CASE("manylinux level: a linux_x86_64 tag is a warning naming the level to use", "[posix]") {
  std::string bytes = compile(kSamples[2].source, "c", kSamples[2].flags);  // GLIBC_2.28
  if (bytes.empty()) FAIL("gcc could not build the sample (install gcc)");
  TempDir dir;
  Report r = verify_wheel(wheel_with(bytes, "linux_x86_64", dir), Options{});
  INFO(format_human(r, false));
  auto found = p2(r);
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == Severity::Warning);
  CHECK(found[0].message == "platform tag linux_x86_64 claims no manylinux level, and PyPI refuses linux_* tags");
  CHECK(found[0].expected ==
        "manylinux_2_28_x86_64, the oldest level the binaries satisfy (manylinux_2_27 is ruled out by "
        "levels/_native.so: needs GLIBC_2.28 from libc.so.6, outside manylinux_2_27)");
  CHECK_FALSE(r.failed(false));  // not an error for verify: pip installs it
}

TEST_CASE("manylinux level: a policy file replaces the built-in one, and bad ones are refused by name", "[posix]") {
  TempDir dir;
  write_file_atomic(dir.path / kPolicyFile,
                    R"({"levels": [{"name": "manylinux_2_99", "alias": "", "libraries": "libc.so.6",
                        "symbol_versions": {"x86_64": {"GLIBC": "2.2.5 2.99"}}}]})");
  Options o;
  o.policy_dir = dir.path;
  TempDir wheels;
  Report r = verify_wheel(wheel_with(compile(kSamples[0].source, "c"), "linux_x86_64", wheels), o);
  auto found = p2(r);
  REQUIRE(found.size() == 1);
  CHECK(found[0].expected.rfind("manylinux_2_99_x86_64, the oldest level", 0) == 0);

  write_file_atomic(dir.path / kPolicyFile, R"({"levels": [{"name": "manylinux2014"}]})");
  CHECK_THROWS_WITH(PolicyTable::load(dir.path / kPolicyFile),
                    Catch::Contains("levels[0].alias is missing") || Catch::Contains("not a manylinux_X_Y level"));
}

TEST_CASE("manylinux level: corpus wheels whose tags claim too little or nothing") {
  SB_SKIP_WITHOUT_CORPUS();
  auto verify = [](const std::string& path) { return verify_wheel(sb::testing::corpus_dir() / path, Options{}); };
  // python_mscl claims manylinux2014 but needs GLIBC_2.29 and links libpython
  // (rule P2, docs/verify-rules.md): no level fits.
  auto mscl = p2(verify("wheels/auditwheel/python_mscl-67.0.1.0-cp313-cp313-manylinux2014_aarch64.whl"));
  REQUIRE_FALSE(mscl.empty());
  CHECK(mscl.back().message ==
        "platform tag manylinux2014_aarch64 claims manylinux_2_17, but no manylinux level fits the binaries");
  // testzlib needs ZLIB_1.2.0, which manylinux_2_5 does not allow.
  auto zlib = p2(verify("wheels/auditwheel/testzlib-0.0.1-cp310-cp310-linux_x86_64.whl"));
  REQUIRE(zlib.size() == 1);
  CHECK(zlib[0].expected.rfind("manylinux_2_12_x86_64, the oldest level the binaries satisfy", 0) == 0);
}
