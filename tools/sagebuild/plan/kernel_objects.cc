#include "sagebuild/plan/kernel_objects.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "sagebuild/common/fs.h"
#include "sagebuild/common/hash.h"

namespace sb::plan {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "sagebuild-kernel-objects-v1";

bool is_key(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string unit_name(const std::string& family, const std::string& source, const std::vector<std::string>& targets) {
  std::string t;
  for (const auto& a : targets) t += (t.empty() ? "" : " ") + a;
  return family + " " + source + " [" + t + "]";
}

std::string text(const json& j, const std::string& key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
    throw UsageError(where + ": expected \"" + key + "\" to be a non-empty string");
  return it->get<std::string>();
}

std::vector<std::string> texts(const json& j, const std::string& key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) throw UsageError(where + ": expected \"" + key + "\" to be a list of strings");
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string()) throw UsageError(where + ": expected \"" + key + "\" to be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<std::string> add_kernel_object(KernelObjects& set, KernelObjectEntry entry, const std::string& row) {
  if (!row.empty() && std::find(set.rows.begin(), set.rows.end(), row) == set.rows.end()) {
    set.rows.push_back(row);
    std::sort(set.rows.begin(), set.rows.end());
  }
  std::vector<std::string> superseded;
  std::erase_if(set.objects, [&](const KernelObjectEntry& e) {
    bool stale = e.key != entry.key && e.family == entry.family && e.source == entry.source &&
                 e.targets == entry.targets && e.compiler == entry.compiler;
    if (stale) superseded.push_back(e.file);
    return stale;
  });
  auto at = std::lower_bound(set.objects.begin(), set.objects.end(), entry.key,
                             [](const KernelObjectEntry& e, const std::string& k) { return e.key < k; });
  if (at == set.objects.end() || at->key != entry.key) set.objects.insert(at, std::move(entry));
  return superseded;
}

std::string kernel_objects_json(const KernelObjects& set) {
  json objects = json::array();
  for (const auto& e : set.objects)
    objects.push_back(json{{"family", e.family},
                           {"source", e.source},
                           {"targets", e.targets},
                           {"key", e.key},
                           {"file", e.file},
                           {"sha256", e.sha256},
                           {"compiler", e.compiler}});
  json j{{"format", kFormat}, {"rows", set.rows}, {"objects", objects}};
  return j.dump(2) + "\n";
}

KernelObjects parse_kernel_objects(std::string_view text_in, const std::string& where) {
  json j = json::parse(text_in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw UsageError(where + ": not a JSON object; expected a manifest written by `sagebuild build --kernels-only`");
  auto fmt = j.find("format");
  if (fmt == j.end() || !fmt->is_string() || fmt->get<std::string>() != kFormat)
    throw UsageError(where + ": expected \"format\": \"" + kFormat + "\" (written by `sagebuild build " +
                     "--kernels-only` of this version); rebuild the directory with this sagebuild");
  KernelObjects set;
  set.rows = texts(j, "rows", where);
  std::sort(set.rows.begin(), set.rows.end());
  set.rows.erase(std::unique(set.rows.begin(), set.rows.end()), set.rows.end());
  auto objs = j.find("objects");
  if (objs == j.end() || !objs->is_array()) throw UsageError(where + ": expected \"objects\" to be a list");
  for (std::size_t i = 0; i < objs->size(); ++i) {
    const json& o = (*objs)[i];
    std::string at = where + ": objects[" + std::to_string(i) + "]";
    if (!o.is_object()) throw UsageError(at + ": expected an object");
    KernelObjectEntry e{text(o, "family", at), text(o, "source", at), texts(o, "targets", at), text(o, "key", at),
                        text(o, "file", at),   text(o, "sha256", at), text(o, "compiler", at)};
    if (!is_key(e.key)) throw UsageError(at + ": \"key\" " + e.key + " is not an object key (64 hex digits)");
    if (e.file != e.key + ".o" && e.file != e.key + ".obj")
      throw UsageError(at + ": \"file\" " + e.file + " is not its key's object (" + e.key + ".o or .obj)");
    if (!is_key(e.sha256)) throw UsageError(at + ": \"sha256\" is not 64 hex digits");
    for (const auto& k : set.objects)
      if (k.key == e.key) throw UsageError(at + ": key " + e.key + " is listed twice");
    set.objects.push_back(std::move(e));  // as listed: an earlier build's entries are the hand-over's to replace
  }
  std::sort(set.objects.begin(), set.objects.end(),
            [](const KernelObjectEntry& a, const KernelObjectEntry& b) { return a.key < b.key; });
  return set;
}

KernelObjects load_kernel_objects(const fs::path& dir) {
  fs::path file = dir / kKernelObjectsManifest;
  std::string make = "; make it with `sagebuild build --row ROW --kernels-only --kernel-objects " + dir.string() +
                     "` (a row of the same CUDA release, archs and platform)";
  if (!fs::is_directory(dir)) throw UsageError("--kernel-objects " + dir.string() + ": no such directory" + make);
  if (!fs::exists(file))
    throw UsageError("--kernel-objects " + dir.string() + ": no " + kKernelObjectsManifest + " in it" + make);
  return parse_kernel_objects(read_file(file), file.string());
}

fs::path handed_object(const KernelObjects& set, const fs::path& dir, const WantedObject& w, const ReadFileFn& read) {
  std::string unit = unit_name(w.family, w.source, w.targets);
  std::string fix = "; fix: rebuild the directory from this checkout and toolchain: `sagebuild build --row " + w.row +
                    " --kernels-only --kernel-objects " + dir.string() + "` (same --archs), or build without " +
                    "--kernel-objects";
  std::string head = "--kernel-objects " + dir.string() + ": row " + w.row + ": kernel unit " + unit;
  const KernelObjectEntry* found = nullptr;
  std::string other;
  for (const auto& e : set.objects) {
    if (e.family != w.family || e.source != w.source) continue;
    if (e.key == w.key) {
      found = &e;
      break;
    }
    if (other.empty()) other = e.key + " (" + unit_name(e.family, e.source, e.targets) + ", " + e.compiler + ")";
  }
  if (!found) {
    if (other.empty())
      throw HandedObjectError(head + ": expected key " + w.key + ", found none (the directory has no object of " +
                              "that unit)" + fix);
    throw HandedObjectError(head + ": expected key " + w.key + ", found key " + other +
                            " (compiled from other sources, flags, archs or compiler)" + fix);
  }
  fs::path path = dir / found->file;
  auto bytes = read(path);
  if (!bytes)
    throw HandedObjectError(head + ": expected key " + w.key + ", found it listed but its object " + path.string() +
                            " is missing" + fix);
  std::string sum = hex(sha256(*bytes));
  if (sum != found->sha256)
    throw HandedObjectError(head + ": expected key " + w.key + ", found it listed, but its object " + path.string() +
                            " has sha256 " + sum + " where the manifest says " + found->sha256 +
                            " (altered after it was made)" + fix);
  return path;
}

}  // namespace sb::plan
