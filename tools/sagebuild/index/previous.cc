#include "sagebuild/index/previous.h"

#include <nlohmann/json.hpp>

#include <map>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/index/variant.h"

namespace sb::index {

namespace {

// A manifest of thousands of wheels is a few MB; anything far larger is not one.
constexpr std::uintmax_t kMaxManifestBytes = 64ull << 20;

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw UsageError(source + ": " + what +
                   "; expected the manifest.json of a site `sagebuild index --wheels-url` wrote");
}

std::string text(const nlohmann::json& entry, const char* key, const std::string& source, const std::string& where) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_string()) bad(source, where + "." + key + " is missing or not a string");
  return it->get<std::string>();
}

IndexedWheel wheel_of(const nlohmann::json& e, const std::string& source, std::size_t i) {
  std::string where = "wheels[" + std::to_string(i) + "]";
  if (!e.is_object()) bad(source, where + " is not an object");
  IndexedWheel w;
  w.filename = text(e, "filename", source, where);
  w.url = text(e, "url", source, where);
  if (w.url.rfind("https://", 0) != 0 && w.url.rfind("http://", 0) != 0 && w.url.rfind("file://", 0) != 0)
    bad(source, where + ".url '" + w.url +
                    "' is relative: that site copied its wheels, so its manifest cannot "
                    "say where they are served");
  w.project = text(e, "project", source, where);
  w.version = text(e, "version", source, where);
  w.torch_version = text(e, "torch", source, where);
  w.cuda_version = text(e, "cuda", source, where);
  w.sha256 = text(e, "sha256", source, where);
  w.requires_python = text(e, "requires_python", source, where);
  auto size = e.find("size");
  if (size == e.end() || !size->is_number_unsigned()) bad(source, where + ".size is missing or not a byte count");
  w.size = size->get<std::uint64_t>();
  if (w.sha256.size() != 64 || w.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
    bad(source, where + ".sha256 is not 64 lowercase hex digits");
  w.build_info = e.contains("build_info") ? e["build_info"] : nlohmann::json();
  // The variant is recomputed, not trusted: the same rule as for new wheels.
  w.variant = variant_name(w.torch_version, w.cuda_version);
  return w;
}

}  // namespace

std::vector<IndexedWheel> parse_previous_manifest(std::string_view text_in, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text_in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) bad(source, "not valid JSON");
  if (!j.is_object() || !j.contains("wheels") || !j["wheels"].is_array()) bad(source, "no \"wheels\" array");
  std::vector<IndexedWheel> out;
  for (std::size_t i = 0; i < j["wheels"].size(); ++i) out.push_back(wheel_of(j["wheels"][i], source, i));
  return out;
}

std::vector<IndexedWheel> read_previous_manifest(const std::filesystem::path& file) {
  std::error_code ec;
  auto size = std::filesystem::file_size(file, ec);
  if (ec) throw UsageError("--previous " + file.string() + ": " + ec.message());
  if (size > kMaxManifestBytes)
    throw UsageError("--previous " + file.string() + ": " + std::to_string(size) + " bytes, more than a manifest has");
  return parse_previous_manifest(read_file(file), file.string());
}

std::vector<IndexedWheel> merge_previous(std::vector<IndexedWheel> current, std::vector<IndexedWheel> previous) {
  std::map<std::string, const IndexedWheel*> now;
  for (const auto& w : current) now.emplace(w.filename, &w);
  std::vector<IndexedWheel> kept;
  for (auto& old : previous) {
    auto it = now.find(old.filename);
    if (it == now.end()) {
      kept.push_back(std::move(old));
      continue;
    }
    if (it->second->sha256 != old.sha256)
      throw UsageError(old.filename + " is in the previous index with SHA-256 " + old.sha256 +
                       " and among the new "
                       "wheels with " +
                       it->second->sha256 +
                       "; a published file must not change: give the new "
                       "build another version or build tag");
  }
  current.insert(current.end(), std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
  return current;
}

}  // namespace sb::index
