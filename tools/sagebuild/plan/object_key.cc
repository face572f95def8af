#include "sagebuild/plan/object_key.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "sagebuild/common/error.h"
#include "sagebuild/common/hash.h"

namespace sb::plan {

namespace fs = std::filesystem;

std::optional<std::string> read_disk_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> scan_includes(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos || line.substr(i, 7) != "include") continue;
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string_view::npos) continue;
    char close = line[i] == '"' ? '"' : line[i] == '<' ? '>' : 0;
    if (!close) continue;
    std::size_t end = line.find(close, i + 1);
    if (end == std::string_view::npos) continue;
    out.emplace_back(line.substr(i + 1, end - i - 1));
  }
  return out;
}

std::vector<fs::path> include_closure(const fs::path& source, const std::vector<fs::path>& include_dirs,
                                      const ReadFileFn& read) {
  std::set<fs::path> seen{source.lexically_normal()};
  std::vector<fs::path> todo{source.lexically_normal()};
  while (!todo.empty()) {
    fs::path file = todo.back();
    todo.pop_back();
    auto text = read(file);
    if (!text) continue;
    for (const auto& inc : scan_includes(*text)) {
      std::vector<fs::path> candidates{(file.parent_path() / inc).lexically_normal()};
      for (const auto& d : include_dirs) candidates.push_back((d / inc).lexically_normal());
      for (const auto& c : candidates) {
        if (seen.count(c)) break;
        if (read(c)) {
          seen.insert(c);
          todo.push_back(c);
          break;
        }
      }
    }
  }
  return {seen.begin(), seen.end()};
}

namespace {
void field(Sha256& h, std::string_view s) {
  std::string len = std::to_string(s.size()) + ":";
  h.update(len);
  h.update(s);
}
}  // namespace

std::string object_key(const ObjectKeyInput& in, const ReadFileFn& read) {
  if (!read(in.source)) throw IoError("kernel source not found: " + in.source.string());
  Sha256 h;
  field(h, "sagebuild-object-v2");  // v2: objects record no checkout or torch path
  field(h, in.compiler);
  field(h, std::to_string(in.flags.size()));
  for (const auto& f : in.flags) field(h, f);
  field(h, in.extra);
  field(h, in.source.lexically_relative(in.repo_root).generic_string());
  for (const auto& d : in.include_dirs) field(h, d.lexically_relative(in.repo_root).generic_string());
  auto files = include_closure(in.source, in.include_dirs, read);
  field(h, std::to_string(files.size()));
  for (const auto& f : files) {
    field(h, f.lexically_relative(in.repo_root).generic_string());
    field(h, hex(sha256(*read(f))));
  }
  return hex(h.finish());
}

}  // namespace sb::plan
