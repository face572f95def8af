#include "sagebuild/index/wheel_scan.h"

#include <algorithm>
#include <map>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/hash.h"
#include "sagebuild/common/text.h"
#include "sagebuild/distinfo/build_info.h"
#include "sagebuild/distinfo/email_header.h"
#include "sagebuild/index/variant.h"
#include "sagebuild/wheel/build_tag.h"
#include "sagebuild/wheel/names.h"
#include "sagebuild/wheel/pep440.h"

namespace fs = std::filesystem;

namespace sb::index {

namespace {

constexpr std::uint64_t kMaxSmallMember = 1 << 20;  // METADATA and build_info are a few KiB

std::string release_str(const wheel::Version& v) { return v.base_version().str(); }

// A top-level "<dir>/<file>" member whose directory satisfies `dir_ok`.
long find_top_level(const zip::Reader& zip, std::string_view file, bool (*dir_ok)(std::string_view)) {
  const auto& entries = zip.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string_view name = entries[i].name;
    std::size_t slash = name.find('/');
    if (slash == std::string_view::npos || name.substr(slash + 1) != file) continue;
    if (dir_ok(name.substr(0, slash))) return static_cast<long>(i);
  }
  return -1;
}

bool is_dist_info(std::string_view dir) { return dir.ends_with(".dist-info"); }
bool is_package_dir(std::string_view dir) { return !dir.ends_with(".dist-info") && !dir.ends_with(".data"); }

std::optional<std::string> read_member(zip::Reader& zip, long index, const fs::path& path) {
  if (index < 0) return std::nullopt;
  std::string text, error;
  if (!zip.read_small(static_cast<std::size_t>(index), kMaxSmallMember, text, error)) {
    throw UsageError(path.string() + ": cannot read " + zip.entries()[index].name + ": " + error);
  }
  return text;
}

wheel::WheelFilename parse_name(const fs::path& path) {
  auto parsed = wheel::parse_wheel_filename(path.filename().string());
  if (!parsed.filename || !parsed.ok()) {
    std::string why = parsed.findings.empty() ? "" : ": " + parsed.findings.front().message;
    throw UsageError(path.string() + ": not a valid wheel file name" + why +
                     "; expected {name}-{version}[-{build}]-{python}-{abi}-{platform}.whl");
  }
  return *parsed.filename;
}

void read_build_info(const std::string& text, const fs::path& path, IndexedWheel& w) {
  try {
    distinfo::BuildInfo info = distinfo::parse_build_info(text);
    w.torch_version = info.torch.version;
    w.cuda_version = info.cuda.version;
    w.build_info = nlohmann::json::parse(text);
  } catch (const distinfo::BuildInfoError& e) {
    throw UsageError(path.string() + ": invalid build_info.json: " + e.what());
  }
}

}  // namespace

std::optional<TorchCuda> torch_cuda_from_filename(const wheel::WheelFilename& name) {
  std::optional<wheel::TorchCudaVersions> decoded;
  if (name.build_tag) decoded = wheel::decode_build_tag(*name.build_tag);
  if (!decoded && !name.version.local.empty()) decoded = wheel::decode_local_version(name.version.local_str());
  if (!decoded) return std::nullopt;
  return TorchCuda{release_str(decoded->torch), release_str(decoded->cuda)};
}

IndexedWheel scan_wheel(const fs::path& path) {
  wheel::WheelFilename name = parse_name(path);
  IndexedWheel w;
  w.source = path;
  w.filename = path.filename().string();
  w.project = wheel::canonicalize_name(name.name);
  w.version = name.version.str();
  auto zip = zip::Reader::open(path);
  if (!zip->usable()) {
    std::string why = zip->findings().empty() ? "" : ": " + zip->findings().front().message;
    throw UsageError(path.string() + ": not a readable zip archive" + why);
  }
  if (auto text = read_member(*zip, find_top_level(*zip, "build_info.json", is_package_dir), path))
    read_build_info(*text, path, w);
  if (w.torch_version.empty()) {
    auto tc = torch_cuda_from_filename(name);
    if (!tc) {
      throw UsageError(path.string() +
                       ": cannot tell which torch and CUDA it is for; expected "
                       "<package>/build_info.json in the wheel, a build tag such as 280.129, or "
                       "a local version such as +cu128torch2.9.0");
    }
    w.torch_version = tc->torch;
    w.cuda_version = tc->cuda;
  }
  w.variant = variant_name(w.torch_version, w.cuda_version);
  if (auto text = read_member(*zip, find_top_level(*zip, "METADATA", is_dist_info), path)) {
    auto header = distinfo::parse_email_header(*text);
    if (const auto* field = header.first("Requires-Python")) {
      // The value goes into every page and into JSON: it must be what pip
      // will parse (PEP 440 specifiers are ASCII), not whatever bytes the
      // wheel holds.
      std::string why;
      if (!wheel::parse_specifier_set(field->value, &why))
        throw UsageError(path.string() + ": METADATA's Requires-Python '" + clip(field->value) +
                         "' is not a specifier set (" + clip(why) + "); expected e.g. >=3.10");
      w.requires_python = field->value;
    }
  }
  w.sha256 = hex(sha256_file(path));
  w.size = zip->file_size();
  return w;
}

std::vector<IndexedWheel> scan_directory(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw UsageError(dir.string() +
                     " is not a directory; expected the directory holding the "
                     "built wheels (*.whl)");
  }
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it.depth() >= kMaxDepth && it->is_directory())
      throw UsageError(printable(dir.string()) + ": directories nested more than " + std::to_string(kMaxDepth) +
                       " deep (" + printable(clip(it->path().string(), 200)) +
                       "); expected the wheels at most a few directories down (one per CI job)");
    if (it->is_regular_file() && it->path().extension() == ".whl") files.push_back(it->path());
  }
  if (ec) throw IoError("cannot list " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::map<std::string, IndexedWheel> by_name;
  for (const auto& f : files) {
    // The name goes into every page and into JSON, which must be UTF-8.
    if (!is_valid_utf8(f.filename().string()))
      throw UsageError(printable(f.string()) +
                       ": the file name is not UTF-8; expected a wheel file name (ASCII, as PEP 427 writes them)");
    IndexedWheel w = scan_wheel(f);
    auto [it, inserted] = by_name.emplace(w.filename, w);
    if (!inserted && it->second.sha256 != w.sha256) {
      throw UsageError("two different wheels named " + w.filename + ": " + it->second.source.string() + " and " +
                       f.string() + "; expected each file name once (a wheel's name must identify it)");
    }
  }
  if (by_name.empty()) throw UsageError(dir.string() + " holds no *.whl files; expected built wheels");
  std::vector<IndexedWheel> out;
  for (auto& [_, w] : by_name) out.push_back(std::move(w));
  return out;
}

std::string wheel_file_key(const std::string& filename) {
  auto parsed = wheel::parse_wheel_filename(filename);
  if (!parsed.filename) return wheel::ascii_lower(filename);
  const auto& f = *parsed.filename;
  auto tags = [](std::vector<std::string> v) {
    for (auto& t : v) t = wheel::ascii_lower(t);
    std::sort(v.begin(), v.end());
    std::string out;
    for (const auto& t : v) out += (out.empty() ? "" : ".") + t;
    return out;
  };
  // PEP 440: 2.2 and 2.2.0 are one version (trailing zeros of the release).
  wheel::Version v = f.version;
  while (v.release.size() > 1 && v.release.back() == 0) v.release.pop_back();
  return wheel::canonicalize_name(f.name) + "-" + v.str() + "-" + f.build_tag.value_or("") + "-" + tags(f.python_tags) +
         "-" + tags(f.abi_tags) + "-" + tags(f.platform_tags);
}

void check_distinct_files(const std::vector<IndexedWheel>& wheels) {
  std::map<std::string, const IndexedWheel*> seen;
  for (const auto& w : wheels) {
    auto [it, inserted] = seen.emplace(wheel_file_key(w.filename), &w);
    if (inserted) continue;
    const IndexedWheel& first = *it->second;
    auto where = [](const IndexedWheel& x) {
      return x.source.empty() ? "the previous index" : printable(x.source.string());
    };
    throw UsageError("two wheels are one file to pip and PyPI: " + printable(first.filename) + " (" + where(first) +
                     ") and " + printable(w.filename) + " (" + where(w) +
                     ") differ only in case, name normalization or version spelling; expected each wheel once: "
                     "remove one, or give the new build another version or build tag");
  }
}

}  // namespace sb::index
