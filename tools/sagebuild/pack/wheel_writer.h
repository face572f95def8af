// Writes a wheel from a staged payload plus metadata: the .dist-info files
// (WHEEL, METADATA, licenses/, RECORD) are generated here, the archive is
// written by the reproducible zip::Writer under a temporary name and renamed
// when complete.
//
// Member order (deterministic, documented):
//   1. payload files, sorted bytewise by archive name
//      (including <package>/build_info.json when build_info is given);
//   2. <dist-info>/ files, sorted bytewise: METADATA, WHEEL, licenses/...;
//   3. <dist-info>/RECORD, always last.
// Timestamps: one fixed time for every member, from SOURCE_DATE_EPOCH or
// 2020-01-01T00:00:00Z.  Modes: 0755 for shared libraries (.so, .so.N,
// .pyd, .dll, .dylib), 0644 for everything else, unless the caller sets one.
// Same inputs -> byte-identical wheel.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sagebuild/distinfo/build_info.h"
#include "sagebuild/distinfo/record.h"
#include "sagebuild/wheel/pep440.h"
#include "sagebuild/wheel/tags.h"

namespace sb::pack {

// One payload file: its name in the archive and where its bytes come from.
struct PayloadFile {
  std::string archive_name;                               // "sageattention/_C.abi3.so"
  std::variant<std::filesystem::path, std::string> data;  // a file on disk, or the bytes
  std::optional<std::uint32_t> mode;                      // default: default_mode(archive_name)
};

struct WheelSpec {
  std::string name;                      // project name as published ("sageattention")
  wheel::Version version;                // may carry our local label (+cu128torch2.9.0)
  std::optional<std::string> build_tag;  // "280.129"
  wheel::TagSets tags;                   // e.g. {{"cp39"}, {"abi3"}, {"linux_x86_64"}}
  std::string summary;
  std::string requires_python;             // ">=3.9"
  std::vector<std::string> requires_dist;  // "torch==2.11.0"
  std::string license_expression;          // "Apache-2.0"
  std::filesystem::path license_file;      // shipped as <dist-info>/licenses/<filename>; empty: none
  std::vector<std::pair<std::string, std::string>> project_urls;
  std::string description;                        // METADATA body
  std::string description_content_type;           // "text/markdown"
  std::optional<distinfo::BuildInfo> build_info;  // written as <build_info->package>/build_info.json
};

struct PackOptions {
  std::filesystem::path output_dir;
  std::optional<std::int64_t> mtime;  // default: timestamp_from_environment()
};

struct PackResult {
  std::filesystem::path path;               // output_dir / file name
  std::vector<distinfo::RecordRow> record;  // as written, RECORD's own row last
};

// Throws UsageError for inconsistent input (duplicate names, names inside
// the .dist-info, invalid tags), IoError for unreadable sources or the output.
PackResult write_wheel(const WheelSpec& spec, std::vector<PayloadFile> payload, const PackOptions& options);

// Every regular file under `staged_dir`, archive names relative to it with '/'.
// Throws IoError; refuses symlinks (a wheel cannot hold them, rule Z7 of docs/verify-rules.md).
std::vector<PayloadFile> collect_staged(const std::filesystem::path& staged_dir);

// SOURCE_DATE_EPOCH when set (UsageError when it is not a decimal integer),
// else 2020-01-01T00:00:00Z.
std::int64_t timestamp_from_environment();
inline constexpr std::int64_t kDefaultTimestamp = 1577836800;  // 2020-01-01T00:00:00Z

std::uint32_t default_mode(std::string_view archive_name);

// "<escaped name>-<normalized version>.dist-info"
std::string dist_info_dir(const WheelSpec& spec);

}  // namespace sb::pack
