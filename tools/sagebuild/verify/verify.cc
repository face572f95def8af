#include "sagebuild/verify/verify.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

#include "sagebuild/common/digest.h"
#include "sagebuild/common/error.h"
#include "sagebuild/distinfo/entry_points.h"
#include "sagebuild/distinfo/metadata.h"
#include "sagebuild/distinfo/record.h"
#include "sagebuild/distinfo/wheel_file.h"
#include "sagebuild/verify/binaries.h"
#include "sagebuild/verify/build_info_rules.h"
#include "sagebuild/verify/extension_suffix.h"
#include "sagebuild/verify/layout.h"
#include "sagebuild/verify/manylinux_level.h"
#include "sagebuild/wheel/platform.h"

namespace sb::verify {

namespace {

// Text members are read whole, each up to its cap: far above any real wheel's
// (torch's RECORD is 3 MB, METADATA a few KiB), low enough that a hostile one
// and what is parsed from it stay well inside verify's memory budget.
constexpr std::uint64_t kRecordCap = 32ull << 20;
constexpr std::uint64_t kMetadataCap = 16ull << 20;  // METADATA, entry_points.txt
constexpr std::uint64_t kSmallCap = 1ull << 20;      // WHEEL, build_info.json
// RECORD rows past one per member (plus this slack) can only be errors; they
// are counted, not kept.
constexpr std::size_t kRecordRowSlack = 1000;

struct Ctx {
  const Options& options;
  Report& report;
  zip::Reader& zip;
  std::optional<wheel::WheelFilename> filename;
  std::vector<std::string> members;  // every entry name, central-directory order
  Layout layout;
  distinfo::WheelFileInfo wheel;
  distinfo::MetadataInfo metadata;
  std::vector<distinfo::RecordRow> record;
  std::optional<distinfo::BuildInfo> build_info;
  Findings& out() { return report.findings; }
};

// Reads a text member; nullopt when absent or unreadable (then with a Z2
// finding saying why: corrupt, or over `cap`).
std::optional<std::string> read_text(Ctx& c, const std::string& name, std::uint64_t cap) {
  long index = c.zip.find(name);
  if (index < 0) return std::nullopt;
  std::string text, error;
  if (!c.zip.read_small(static_cast<std::size_t>(index), cap, text, error)) {
    add(c.out(), "Z2", Severity::Error, name, "cannot read: " + error,
        "a readable member of at most " + std::to_string(cap) + " bytes");
    return std::nullopt;
  }
  return text;
}

void check_filename(Ctx& c) {
  auto parsed = wheel::parse_wheel_filename(c.report.path.filename().string());
  c.out().merge(parsed.findings);
  c.filename = parsed.filename;
}

void check_wheel_member(Ctx& c) {
  std::string name = c.layout.dist_info + "/WHEEL";
  auto text = read_text(c, name, kSmallCap);
  if (!text) {  // present but unreadable: the Z finding said why
    if (c.zip.find(name) < 0) add(c.out(), "W1", Severity::Error, name, "no WHEEL file", name);
    return;
  }
  distinfo::WheelFileExpectations exp;
  if (c.filename) {
    for (const auto& t : c.filename->expanded()) exp.tags.push_back(t.str());
    exp.build_tag = c.filename->build_tag;
  }
  auto f = distinfo::check_wheel_file(*text, name, exp, &c.wheel);
  if (!c.filename)  // nothing to compare the tags and build with
    std::erase_if(f, [](const Finding& x) { return x.rule == "W5" || x.rule == "W6"; });
  c.out().merge(f);
}

void check_metadata_member(Ctx& c) {
  std::string name = c.layout.dist_info + "/METADATA";
  auto text = read_text(c, name, kMetadataCap);
  if (!text) {  // present but unreadable: the Z finding said why
    if (c.zip.find(name) < 0) add(c.out(), "M1", Severity::Error, name, "no METADATA file", name);
    return;
  }
  distinfo::MetadataExpectations exp;
  if (c.filename) {
    exp.filename_project = c.filename->name;
    exp.filename_version = c.filename->version;
  }
  exp.dist_info = c.layout.dist_info;
  exp.has_member = [&c](std::string_view m) { return c.zip.find(m) >= 0; };
  auto f = distinfo::check_metadata(*text, name, exp, &c.metadata);
  c.out().merge(f);
}

void check_record_member(Ctx& c) {
  std::string name = c.layout.dist_info + "/RECORD";
  auto text = read_text(c, name, kRecordCap);
  if (!text) {  // present but unreadable: the Z finding said why
    if (c.zip.find(name) < 0) add(c.out(), "R1", Severity::Error, name, "no RECORD file", name);
    return;
  }
  auto parsed = distinfo::parse_record(*text, name, c.members.size() + kRecordRowSlack);
  text.reset();  // the rows hold what is needed; RECORD may be 30 MB
  c.out().merge(parsed.findings);
  c.record = std::move(parsed.rows);
  distinfo::ArchiveListing listing{{}, name};
  for (const auto& m : c.members)
    if (m.empty() || m.back() != '/') listing.files.push_back(m);
  auto f = distinfo::check_record(c.record, listing);
  c.out().merge(f);
}

void check_entry_points_member(Ctx& c) {
  std::string name = c.layout.dist_info + "/entry_points.txt";
  auto text = read_text(c, name, kMetadataCap);
  if (!text) return;
  auto parsed = distinfo::parse_entry_points(*text, name);
  c.out().merge(parsed.findings);
  auto f = distinfo::check_entry_points(parsed.entries, name, c.layout.data_scripts);
  c.out().merge(f);
}

// One pass over every member: CRC-32 (in the reader) and the RECORD digest
// and size, streamed chunk by chunk.
void hash_members(Ctx& c) {
  std::unordered_map<std::string_view, const distinfo::RecordRow*> rows;
  for (const auto& r : c.record) rows.emplace(r.path, &r);
  const auto& entries = c.zip.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    if (e.is_directory() || e.is_encrypted()) continue;
    auto it = rows.find(e.name);
    if (e.name == c.layout.dist_info + "/RECORD") it = rows.end();  // R6 judges its own row
    std::optional<distinfo::RecordHash> hash;
    Findings ignored;  // syntax problems were reported by check_record
    if (it != rows.end() && !it->second->hash.empty()) hash = distinfo::check_row_hash(*it->second, ignored);
    auto digester = hash ? Digest::create(hash->algo) : nullptr;
    if (hash && !digester && distinfo::is_allowed_record_algorithm(hash->algo))
      add(c.out(), "R5", Severity::Error, e.name,
          "RECORD's " + hash->algo + " digest cannot be checked: this platform's sagebuild has no " + hash->algo,
          "a digest it can check (sha256; Windows' CNG has no blake2b, and SHA-3 only from Windows 11 24H2)");
    auto r = c.zip.read(i, [&](const std::uint8_t* d, std::size_t n) {
      if (digester) digester->update(d, n);
      return true;
    });
    c.report.hashed_bytes += r.bytes;
    if (!r.ok || it == rows.end()) continue;
    const auto& row = *it->second;
    if (digester && digester->finish() != hash->digest)
      add(c.out(), "R5", Severity::Error, e.name, "content does not match RECORD's " + hash->algo + " digest",
          "the digest RECORD lists (line " + std::to_string(row.line) + ")");
    if (!row.size.empty() && row.size != std::to_string(r.bytes) &&
        row.size.find_first_not_of("0123456789") == std::string::npos)
      add(c.out(), "R5", Severity::Error, e.name,
          "RECORD size " + row.size + ", content is " + std::to_string(r.bytes) + " bytes", std::to_string(r.bytes));
  }
}

// Our wheels put build_info.json in their top-level package.
std::string find_build_info(const Ctx& c) {
  for (const auto& m : c.members) {
    auto slash = m.find('/');
    if (slash != std::string::npos && m.substr(slash) == "/build_info.json" &&
        m.compare(0, slash, c.layout.dist_info) != 0)
      return m;
  }
  return {};
}

void check_build_info(Ctx& c) {
  std::string name = find_build_info(c);
  if (name.empty() || !c.filename) return;
  auto text = read_text(c, name, kSmallCap);
  if (!text) return;
  c.report.has_build_info = true;
  auto& b = c.build_info = load_build_info(*text, name, c.out());
  if (!b) return;
  check_build_info_filename(*b, *c.filename, name, c.out());
  check_build_info_tags(*b, *c.filename, c.wheel.tags, name, c.out());
  check_python_coverage(*b, name, c.out());
}

// Then B4, which needs to know how the extension links torch.
void check_native_code(Ctx& c) {
  WheelBinaries binaries;
  // Every wheel: a binary may sit anywhere (*.data/scripts/ with no .so
  // beside it), and its platform tag speaks for each (binaries.h).
  if (c.filename) {
    BinaryCheckInput in{c.report.path,
                        c.zip,
                        *c.filename,
                        &policy_for(c.options),
                        c.options.allowed_libraries,
                        c.build_info ? &*c.build_info : nullptr};
    binaries = check_binaries(in, c.out());
  }
  if (c.build_info)
    check_torch_pin(*c.build_info, c.metadata.requires_dist, binaries.torch_binding, find_build_info(c), c.out());
}

void check_dist_info(Ctx& c) {
  if (c.layout.dist_info.empty()) return;  // D1 said why
  check_wheel_member(c);
  check_metadata_member(c);
  check_record_member(c);
  check_entry_points_member(c);
  check_purelib_layout(c.layout, c.members, c.wheel.root_is_purelib, c.filename ? &*c.filename : nullptr, c.out());
}

}  // namespace

// The built-in manylinux policy, or the one in options.policy_dir (loaded
// once per process per directory).  The cache is guarded so that callers on
// several threads stay safe (today sagebuild verifies one wheel at a time); a
// std::map's entries stay where they are when others are added, so the
// reference outlives the lock.
const PolicyTable& policy_for(const Options& o) {
  if (o.policy_dir.empty()) return PolicyTable::embedded();
  static std::mutex lock;
  static std::map<std::filesystem::path, PolicyTable> cache;
  std::lock_guard<std::mutex> hold(lock);
  auto it = cache.find(o.policy_dir);
  if (it == cache.end()) it = cache.emplace(o.policy_dir, PolicyTable::load(o.policy_dir / kPolicyFile)).first;
  return it->second;
}

DerivedTag derive_platform_tag(const std::string& platform, const std::vector<NamedLibrary>& libraries,
                               std::vector<std::string> members, const Options& options) {
  auto info = wheel::classify_platform(platform);
  if (info.family != wheel::PlatformFamily::Linux) return {platform, ""};
  std::vector<BinaryFacts> facts;
  for (const auto& lib : libraries) {
    auto source = binary::FileSource::open(lib.file);
    Findings structure;
    auto elf = binary::identify_elf(*source).is_elf ? binary::ElfFile::parse(*source, structure) : nullptr;
    if (!elf) continue;  // not one Linux loads: verify's P8 says so, by member, after the pack
    BinaryFacts f = elf_facts(*elf, lib.member);
    if (f.machine == info.arch) facts.push_back(std::move(f));
  }
  const PolicyTable& policy = policy_for(options);
  if (facts.empty() || policy.levels(info.arch).empty()) return {platform, ""};
  std::sort(members.begin(), members.end());  // check_needed_libraries searches it
  LevelContext ctx{policy, options.allowed_libraries, members};
  const ManylinuxPolicy* level = oldest_level(facts, info.arch, ctx);
  return {level ? level->name + "_" + info.arch : platform, level_advice(facts, info.arch, ctx)};
}

namespace {

// The per-component report: the name's parts, then what build_info.json
// adds.
void describe_components(Ctx& c) {
  wheel::Explained e = wheel::explain_wheel_filename(c.report.path.filename().string());
  auto& parts = c.report.components = std::move(e.parts);
  c.report.component_notes = std::move(e.notes);
  if (!c.build_info) return;
  const distinfo::BuildInfo& b = *c.build_info;
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
    return out;
  };
  bool named = std::any_of(parts.begin(), parts.end(), [](const wheel::Part& p) { return p.key == "torch"; });
  if (!named) {
    parts.push_back({"torch", "PyTorch (build_info.json)", b.torch.version, ""});
    parts.push_back({"cuda", "CUDA (build_info.json)", b.cuda.version, ""});
    c.report.component_notes.clear();
  }
  parts.push_back({"archs", "archs", join(b.archs), b.ptx_archs.empty() ? "" : "PTX for " + join(b.ptx_archs)});
  std::string families, built;
  for (const auto& [name, f] : b.kernel_families) {
    families += (families.empty() ? "" : " ") + name;
    built += (built.empty() ? "" : ", ") + name + " " + (f.archs.empty() ? ">= " + f.min_arch : join(f.archs));
  }
  if (!families.empty()) parts.push_back({"families", "kernel families", families, built});
}

}  // namespace

std::filesystem::path default_policy_dir() {
  if (const char* env = std::getenv("SAGEBUILD_POLICY_DIR"); env && *env) return env;
  return {};  // the built-in policy
}

Report verify_wheel(const std::filesystem::path& path, const Options& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw IoError(path.string() + ": no such file (expected a .whl file)");
  Report report;
  report.path = path;
  auto zip = zip::Reader::open(path, options.limits);
  Ctx c{options, report, *zip, {}, {}, {}, {}, {}, {}, {}};
  check_filename(c);
  if (zip->usable()) {
    for (const auto& e : zip->entries()) c.members.push_back(e.name);
    c.layout = check_layout(c.members, c.filename ? &*c.filename : nullptr, c.out());
    check_dist_info(c);
    hash_members(c);
    check_build_info(c);
    if (c.filename) check_extension_suffixes(c.members, *c.filename, c.out());
    check_native_code(c);
  }
  // Last: reading may have added Z2/Z5 findings.
  report.findings.merge(zip->findings());
  describe_components(c);
  return report;
}

}  // namespace sb::verify
