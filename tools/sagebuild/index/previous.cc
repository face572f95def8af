#include "sagebuild/index/previous.h"

#include <nlohmann/json.hpp>

#include <map>

#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/json_limits.h"
#include "sagebuild/common/text.h"
#include "sagebuild/index/urls.h"
#include "sagebuild/index/variant.h"
#include "sagebuild/wheel/filename.h"
#include "sagebuild/wheel/names.h"
#include "sagebuild/wheel/pep440.h"

namespace sb::index {

namespace {

// A manifest entry is about 1.5 KB with its build information: 8 MiB holds
// some 5,000 wheels, and parsing it stays far below 256 MiB.
constexpr std::uintmax_t kMaxManifestBytes = 8ull << 20;

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
  // Nothing of it is trusted: the project becomes a directory of the site
  // and lands in its shell commands, the url in its links.
  w.filename = text(e, "filename", source, where);
  auto name = wheel::parse_wheel_filename(w.filename);
  if (!name.filename || !name.ok() || w.filename.find_first_of("/\\") != std::string::npos)
    bad(source, where + ".filename '" + printable(clip(w.filename)) + "' is not a wheel file name");
  w.url = text(e, "url", source, where);
  if (std::string why = url_problem(w.url, UrlForm::absolute); !why.empty())
    bad(source, where + ".url '" + printable(clip(w.url)) + "': " + why +
                    (w.url.find(':') == std::string::npos
                         ? " (that site copied its wheels, so its manifest cannot say where they are served)"
                         : ""));
  w.project = text(e, "project", source, where);
  if (!wheel::is_valid_project_name(w.project) || wheel::canonicalize_name(w.project) != w.project ||
      wheel::canonicalize_name(name.filename->name) != w.project)
    bad(source, where + ".project '" + printable(clip(w.project)) +
                    "' is not the normalized project name of its file name (PEP 503: lowercase letters, digits "
                    "and '-', e.g. '" +
                    wheel::canonicalize_name(name.filename->name) + "')");
  w.version = text(e, "version", source, where);
  if (w.version != name.filename->version.str())
    bad(source, where + ".version '" + printable(clip(w.version)) + "' is not its file name's version '" +
                    name.filename->version.str() + "'");
  w.torch_version = text(e, "torch", source, where);
  w.cuda_version = text(e, "cuda", source, where);
  w.sha256 = text(e, "sha256", source, where);
  w.requires_python = text(e, "requires_python", source, where);
  if (!w.requires_python.empty() && !wheel::parse_specifier_set(w.requires_python))
    bad(source, where + ".requires_python '" + printable(clip(w.requires_python)) + "' is not a specifier set");
  auto size = e.find("size");
  if (size == e.end() || !size->is_number_unsigned()) bad(source, where + ".size is missing or not a byte count");
  w.size = size->get<std::uint64_t>();
  if (w.sha256.size() != 64 || w.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
    bad(source, where + ".sha256 is not 64 lowercase hex digits");
  w.build_info = e.contains("build_info") ? e["build_info"] : nlohmann::json();
  // The variant is recomputed, not trusted: the same rule as for new wheels.
  try {
    w.variant = variant_name(w.torch_version, w.cuda_version);
  } catch (const UsageError& err) {
    bad(source, where + ": " + err.what());
  }
  return w;
}

}  // namespace

std::vector<IndexedWheel> parse_previous_manifest(std::string_view text_in, const std::string& source) {
  if (json_depth(text_in) > kMaxJsonDepth)
    bad(source, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (a manifest is 7 deep)");
  nlohmann::json j = nlohmann::json::parse(text_in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) bad(source, "not valid JSON");
  if (!j.is_object() || !j.contains("wheels") || !j["wheels"].is_array()) bad(source, "no \"wheels\" array");
  std::vector<IndexedWheel> out;
  std::map<std::string, std::size_t> listed;  // a manifest sagebuild wrote names each file once
  for (std::size_t i = 0; i < j["wheels"].size(); ++i) {
    out.push_back(wheel_of(j["wheels"][i], source, i));
    auto [it, inserted] = listed.emplace(out.back().filename, i);
    if (!inserted)
      bad(source, "wheels[" + std::to_string(i) + "] lists " + printable(out.back().filename) +
                      " again (first at wheels[" + std::to_string(it->second) +
                      "]); one file name must be one file, published once");
  }
  return out;
}

std::vector<IndexedWheel> read_previous_manifest(const std::filesystem::path& file) {
  return parse_previous_manifest(read_file_capped(file, kMaxManifestBytes, "--previous"), file.string());
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
