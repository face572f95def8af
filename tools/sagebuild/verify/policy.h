// The manylinux policy (auditwheel's, flattened into two TSV data files):
// which symbol versions and which system libraries a manylinux_X_Y claim
// allows.  Loaded at run time from the data files; nothing is compiled in.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sb::verify {

struct ManylinuxPolicy {
  std::string name;                                     // "manylinux_2_17"
  std::vector<std::string> aliases;                     // "manylinux2014"
  std::map<std::string, std::map<std::string, std::set<std::string>>> versions;  // arch -> family -> allowed
  std::set<std::string> lib_whitelist;
};

class PolicyTable {
 public:
  // Reads manylinux_symbol_limits.tsv and manylinux_lib_whitelist.tsv from
  // `dir`; throws IoError naming the file and line on missing or malformed data.
  static PolicyTable load(const std::filesystem::path& dir);

  // The policy a platform tag claims: "manylinux2014_x86_64" and
  // "manylinux_2_17_x86_64" both give manylinux_2_17 (arch returned apart).
  // nullptr for non-manylinux tags or a policy the table does not know.
  const ManylinuxPolicy* for_platform(const std::string& platform_tag, std::string* arch = nullptr) const;

  std::size_t size() const { return policies_.size(); }

 private:
  std::map<std::string, ManylinuxPolicy> policies_;
};

}  // namespace sb::verify
