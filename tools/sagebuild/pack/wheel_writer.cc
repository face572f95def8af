#include "sagebuild/pack/wheel_writer.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "sagebuild/archive/zip_writer.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/distinfo/metadata.h"
#include "sagebuild/distinfo/wheel_file.h"
#include "sagebuild/wheel/filename.h"
#include "sagebuild/wheel/names.h"

namespace sb::pack {

namespace {

std::string record_hash(const Digest256& d) { return "sha256=" + urlsafe_b64_nopad(d); }

// Hash and size of a payload file, streamed for files on disk.
distinfo::RecordRow record_row(const PayloadFile& f) {
  if (const auto* bytes = std::get_if<std::string>(&f.data))
    return {f.archive_name, record_hash(sha256(*bytes)), std::to_string(bytes->size()), 0};
  const auto& path = std::get<std::filesystem::path>(f.data);
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError("cannot read " + path.string() + " (for " + f.archive_name + "): " + ec.message());
  return {f.archive_name, record_hash(sha256_file(path)), std::to_string(size), 0};
}

void add_to_archive(zip::Writer& w, const PayloadFile& f) {
  std::uint32_t mode = f.mode.value_or(default_mode(f.archive_name));
  if (const auto* bytes = std::get_if<std::string>(&f.data))
    w.add_file(f.archive_name, *bytes, mode);
  else
    w.add_file_from_disk(f.archive_name, std::get<std::filesystem::path>(f.data), mode);
}

void validate_payload(const std::vector<PayloadFile>& payload, const std::string& dist_info) {
  std::set<std::string> seen;
  for (const auto& f : payload) {
    const auto& n = f.archive_name;
    bool dotdot = n == ".." || n.rfind("../", 0) == 0 || n.find("/../") != std::string::npos || n.ends_with("/..");
    if (n.empty() || n.front() == '/' || n.back() == '/' || n.find('\\') != std::string::npos || dotdot)
      throw UsageError("payload name '" + n + "' is not a relative '/'-separated file path without '..'");
    if (n.compare(0, dist_info.size() + 1, dist_info + "/") == 0)
      throw UsageError("payload name '" + n + "' is inside " + dist_info + "/ (the writer generates those files)");
    if (!seen.insert(n).second) throw UsageError("payload name '" + n + "' appears twice");
  }
}

std::vector<PayloadFile> dist_info_files(const WheelSpec& spec, const std::string& dist_info,
                                         const std::vector<wheel::Tag>& tags) {
  distinfo::MetadataSpec m{spec.name,          spec.version.str(),           spec.summary, spec.requires_python,
                           spec.requires_dist, spec.license_expression,      {},           spec.project_urls,
                           spec.description,   spec.description_content_type};
  std::vector<PayloadFile> files;
  if (!spec.license_file.empty()) {
    std::string base = spec.license_file.filename().string();
    m.license_files.push_back(base);
    files.push_back({dist_info + "/licenses/" + base, spec.license_file, std::nullopt});
  }
  distinfo::WheelFileSpec w;
  for (const auto& t : tags) w.tags.push_back(t.str());
  w.build_tag = spec.build_tag;
  files.push_back({dist_info + "/METADATA", distinfo::write_metadata(m), std::nullopt});
  files.push_back({dist_info + "/WHEEL", distinfo::write_wheel_file(w), std::nullopt});
  return files;
}

void sort_by_name(std::vector<PayloadFile>& v) {
  std::sort(v.begin(), v.end(),
            [](const PayloadFile& a, const PayloadFile& b) { return a.archive_name < b.archive_name; });
}

}  // namespace

// "libcudart.so.12", "libx.so.1.2": a versioned shared-object name.
static bool is_versioned_so(std::string_view n) {
  auto at = n.rfind(".so.");
  return at != std::string_view::npos && at + 4 < n.size() &&
         n.find_first_not_of("0123456789.", at + 4) == std::string_view::npos;
}

std::uint32_t default_mode(std::string_view n) {
  bool shared =
      n.ends_with(".so") || is_versioned_so(n) || n.ends_with(".pyd") || n.ends_with(".dll") || n.ends_with(".dylib");
  return shared ? 0755 : 0644;
}

std::string dist_info_dir(const WheelSpec& spec) {
  return wheel::wheel_escape_name(spec.name) + "-" + spec.version.str() + ".dist-info";
}

std::int64_t timestamp_from_environment() {
  const char* env = std::getenv("SOURCE_DATE_EPOCH");
  if (!env || !*env) return kDefaultTimestamp;
  std::string s(env);
  if (s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
    throw UsageError("SOURCE_DATE_EPOCH='" + s + "' is not a decimal number of seconds since 1970");
  return std::stoll(s);
}

std::vector<PayloadFile> collect_staged(const std::filesystem::path& dir) {
  std::vector<PayloadFile> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != decltype(it){};
       it.increment(ec)) {
    if (it->is_symlink())
      throw IoError(it->path().string() + " is a symbolic link (a wheel holds regular files only; copy its target)");
    if (!it->is_regular_file()) continue;
    out.push_back({std::filesystem::relative(it->path(), dir).generic_string(), it->path(), std::nullopt});
  }
  if (ec) throw IoError("cannot list staged directory " + dir.string() + ": " + ec.message());
  return out;
}

PackResult write_wheel(const WheelSpec& spec, std::vector<PayloadFile> payload, const PackOptions& options) {
  std::string why;
  auto tags = wheel::expand(spec.tags, wheel::kMaxExpandedTags, &why);
  if (!tags || tags->empty()) throw UsageError("wheel tags " + spec.tags.str() + ": " + why);
  std::string dist_info = dist_info_dir(spec);
  if (spec.build_info)
    payload.push_back(
        {spec.build_info->package + "/build_info.json", distinfo::write_build_info(*spec.build_info), std::nullopt});
  validate_payload(payload, dist_info);
  sort_by_name(payload);
  auto meta = dist_info_files(spec, dist_info, *tags);
  sort_by_name(meta);
  payload.insert(payload.end(), meta.begin(), meta.end());

  PackResult result;
  result.path = options.output_dir / wheel::format_wheel_filename(spec.name, spec.version, spec.build_tag, spec.tags);
  zip::Writer writer(result.path, {options.mtime.value_or(timestamp_from_environment())});
  for (const auto& f : payload) {
    result.record.push_back(record_row(f));
    add_to_archive(writer, f);
  }
  result.record.push_back({dist_info + "/RECORD", "", "", 0});
  writer.add_file(dist_info + "/RECORD", distinfo::write_record(result.record), 0644);
  writer.commit();
  return result;
}

}  // namespace sb::pack
