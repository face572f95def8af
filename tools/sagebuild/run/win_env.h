// A Windows environment as data: names compare case-insensitively, and the
// block CreateProcessW takes is built from it here, so that the rules (the
// overrides a command asks for, the sort order the block must have) are
// tested on Linux.  The Windows process runner only converts the result to
// UTF-16.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sb::run {

// An environment with Windows semantics: names compare case-insensitively
// (Path and PATH are one variable) and keep the spelling first seen.
class Environment {
 public:
  struct Var {
    std::string name;
    std::string value;
  };

  // Sets (or replaces) a variable; an existing name keeps its spelling.
  void set(std::string_view name, std::string_view value);
  const std::string* get(std::string_view name) const;
  bool remove(std::string_view name);
  const std::vector<Var>& vars() const { return vars_; }
  std::size_t size() const { return vars_.size(); }

 private:
  std::vector<Var> vars_;
};

// Parses a block of NAME=VALUE strings as GetEnvironmentStrings returns it
// (already split into entries).  A leading '=' belongs to the name: Windows
// keeps per-drive directories as "=C:=C:\dir".  Entries without a '=' after
// the first character are dropped.
Environment environment_from_entries(const std::vector<std::string>& entries);

// `base` with a command's overrides applied: a value sets the variable, a
// nullopt removes it.  Throws sb::UsageError when a name is empty or contains
// '=' (it would not survive the block), naming it.
Environment apply_overrides(Environment base, const std::map<std::string, std::optional<std::string>>& overrides);

// The entries of the environment block, "NAME=VALUE" each, in the order the
// block must have: sorted by name, case-insensitively (names compared
// upper-cased, ordinal), as CreateProcess's documentation requires of
// lpEnvironment.
std::vector<std::string> environment_block_entries(const Environment& env);

}  // namespace sb::run
