// The manylinux policy: which symbol versions and which system libraries each
// manylinux_X_Y level allows.  The data is tools/sagebuild/verify/
// manylinux-policy.json (facts from pypa/auditwheel, names from PEP 600),
// compiled into the binary, so a clone or an installed sagebuild needs no
// data file at run time; a file of the same format can replace it.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sb::verify {

struct ManylinuxPolicy {
  std::string name;                                                              // "manylinux_2_17"
  std::vector<std::string> aliases;                                              // "manylinux2014"
  int glibc_major = 0, glibc_minor = 0;                                          // 2, 17: the order of levels (PEP 600)
  std::map<std::string, std::map<std::string, std::set<std::string>>> versions;  // arch -> family -> allowed
  std::set<std::string> lib_whitelist;

  // Whether this level is below `other` (an older glibc).
  bool older_than(const ManylinuxPolicy& other) const {
    return std::pair(glibc_major, glibc_minor) < std::pair(other.glibc_major, other.glibc_minor);
  }
};

class PolicyTable {
 public:
  // The policy compiled in from manylinux-policy.json.
  static const PolicyTable& embedded();
  // A policy file of the same format; throws IoError naming the file and
  // what is wrong with it.
  static PolicyTable load(const std::filesystem::path& file);
  // The same from text; `source` names it in messages.
  static PolicyTable parse(std::string_view json, const std::string& source);

  // The policy a platform tag claims: "manylinux2014_x86_64" and
  // "manylinux_2_17_x86_64" both give manylinux_2_17 (arch returned apart).
  // nullptr for non-manylinux tags or a level the table does not know.
  const ManylinuxPolicy* for_platform(const std::string& platform_tag, std::string* arch = nullptr) const;

  // Every level with data for `arch`, oldest first.
  std::vector<const ManylinuxPolicy*> levels(const std::string& arch) const;
  // The architectures the table has data for ("aarch64", "x86_64").
  std::set<std::string> archs() const;

  std::size_t size() const { return policies_.size(); }

 private:
  std::vector<ManylinuxPolicy> policies_;  // oldest first
};

}  // namespace sb::verify
