#include "sagebuild/verify/policy.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "sagebuild/common/error.h"

namespace sb::verify {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep))
    if (!part.empty()) out.push_back(part);
  return out;
}

// Each data line as its tab-separated columns; the header line is skipped.
std::vector<std::vector<std::string>> read_tsv(const std::filesystem::path& file, std::size_t min_columns) {
  std::ifstream in(file);
  if (!in) throw IoError("cannot read policy table " + file.string());
  std::vector<std::vector<std::string>> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (n == 1 || line.empty()) continue;
    std::vector<std::string> cols;
    std::stringstream row(line);
    std::string col;
    while (std::getline(row, col, '\t')) cols.push_back(col);
    while (cols.size() < min_columns && line.back() == '\t') cols.emplace_back();
    if (cols.size() < min_columns)
      throw IoError(file.string() + ":" + std::to_string(n) + ": " + std::to_string(cols.size()) + " columns, expected " +
                    std::to_string(min_columns));
    rows.push_back(std::move(cols));
  }
  return rows;
}

}  // namespace

PolicyTable PolicyTable::load(const std::filesystem::path& dir) {
  PolicyTable t;
  // policy aliases priority arch family max_version allowed_versions
  for (auto& c : read_tsv(dir / "manylinux_symbol_limits.tsv", 7)) {
    auto& p = t.policies_[c[0]];
    p.name = c[0];
    p.aliases = split(c[1], ' ');
    auto& allowed = p.versions[c[3]][c[4]];
    for (auto& v : split(c[6], ' ')) allowed.insert(v);
  }
  // policy lib_whitelist blacklisted_symbols
  for (auto& c : read_tsv(dir / "manylinux_lib_whitelist.tsv", 2)) {
    auto it = t.policies_.find(c[0]);
    if (it == t.policies_.end()) continue;  // "linux" and musllinux rows: no symbol policy here
    for (auto& lib : split(c[1], ' ')) it->second.lib_whitelist.insert(lib);
  }
  return t;
}

const ManylinuxPolicy* PolicyTable::for_platform(const std::string& tag, std::string* arch) const {
  for (const auto& [name, p] : policies_) {
    std::vector<std::string> prefixes = p.aliases;
    prefixes.push_back(name);
    for (const auto& prefix : prefixes)
      if (tag.size() > prefix.size() + 1 && tag.compare(0, prefix.size(), prefix) == 0 && tag[prefix.size()] == '_') {
        std::string a = tag.substr(prefix.size() + 1);
        // manylinux_2_1 must not match manylinux_2_17_x86_64: the rest is an arch, not digits
        if (!a.empty() && std::isdigit(static_cast<unsigned char>(a[0]))) continue;
        if (arch) *arch = a;
        return &p;
      }
  }
  return nullptr;
}

}  // namespace sb::verify
