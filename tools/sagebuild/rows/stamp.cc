#include "sagebuild/rows/stamp.h"

#include <variant>

#include <nlohmann/json.hpp>

#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/pack/wheel_writer.h"

namespace sb::rows {

namespace fs = std::filesystem;

// What a row's wheel is made of: the payload's names and contents, the
// build-info, the licence, the members' time (SOURCE_DATE_EPOCH) and the
// options that change the checks.  Equal
// stamps mean an identical wheel, already verified and smoke-tested.
std::string row_stamp(const std::vector<pack::PayloadFile>& payload, const distinfo::BuildInfo& info,
                      const fs::path& license, bool smoke) {
  Sha256 h;
  auto field = [&](std::string_view s) {
    h.update(std::to_string(s.size()) + ":");
    h.update(s);
  };
  field("sagebuild-row-stamp-2");
  for (const auto& f : payload) {
    field(f.archive_name);
    if (const auto* path = std::get_if<fs::path>(&f.data))
      field(hex(sha256_file(*path)));
    else
      field(hex(sha256(std::get<std::string>(f.data))));
  }
  nlohmann::json j;
  distinfo::to_json(j, info);
  field(j.dump());
  field(fs::exists(license) ? hex(sha256_file(license)) : "no licence");
  field(smoke ? "smoke" : "no smoke");
  field("mtime " + std::to_string(pack::timestamp_from_environment()));
  return hex(h.finish());
}

// The row's last good build left this stamp and its wheel in --out untouched.
bool up_to_date(const fs::path& stamp_file, const fs::path& wheel, const std::string& stamp, RowResult& res) {
  if (!fs::exists(stamp_file) || !fs::exists(wheel)) return false;
  auto j = nlohmann::json::parse(read_file(stamp_file), nullptr, false);
  std::string sha = hex(sha256_file(wheel));
  if (j.is_discarded() || j.value("stamp", "") != stamp || j.value("sha256", "") != sha) return false;
  res.stage = "done";
  res.wheel = wheel;
  res.size = fs::file_size(wheel);
  res.sha256 = sha;
  res.smoke = "up to date: packed, verified and smoke-tested by an earlier build";
  res.ok = true;
  return true;
}

void write_stamp(const fs::path& stamp_file, const std::string& stamp, const std::string& wheel_sha256) {
  write_file_atomic(stamp_file, nlohmann::json{{"stamp", stamp}, {"sha256", wheel_sha256}}.dump() + "\n");
}

}  // namespace sb::rows
