// Strict, located access to a parsed YAML document. Every accessor checks the
// node's shape and throws ConfigError at its file:line:column, naming what was
// expected, so the loader reads like a schema and never sees a bad node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sagebuild/common/error.h"

namespace sb::matrix {

// A scalar and where it was written.
struct Located {
  std::string text;
  SourceLocation where;
};

class YamlMap;

class YamlValue {
 public:
  // `what` names the value in messages ("'archs' of package 'sageattention'");
  // `fallback` is used where the node has no mark of its own (empty values).
  YamlValue(YAML::Node node, std::shared_ptr<const std::string> file, std::string what, SourceLocation fallback);

  const std::string& what() const { return what_; }
  SourceLocation where() const;
  [[noreturn]] void fail(const std::string& message) const;

  bool is_null() const { return !node_.IsDefined() || node_.IsNull(); }
  Located scalar() const;
  bool boolean() const;  // only `true` / `false`, as YAML 1.2 spells them
  std::vector<YamlValue> list() const;
  std::vector<Located> scalar_list() const;
  // A mapping whose keys are fixed: unknown keys fail, listing the allowed
  // ones and the closest match; duplicate keys fail.
  YamlMap map(std::initializer_list<std::string_view> allowed) const;
  // A mapping whose keys are names (profiles, packages, ...): duplicate keys
  // fail, calling an entry `noun` ("duplicate profile 'x'").
  std::vector<std::pair<Located, YamlValue>> named_entries(std::string_view noun) const;

 private:
  std::string kind() const;  // "a list", "a mapping", "a string 'x'", "nothing"
  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string what_;
  SourceLocation fallback_;
};

class YamlMap {
 public:
  YamlMap(YamlValue self, std::vector<std::pair<Located, YamlValue>> entries);
  std::optional<YamlValue> get(std::string_view key) const;
  YamlValue required(std::string_view key) const;  // fails at the mapping if missing
  const YamlValue& self() const { return self_; }

 private:
  YamlValue self_;
  std::vector<std::pair<Located, YamlValue>> entries_;
};

// What a document may hold before it is built into nodes: a build matrix is
// 10 KB of a few hundred nodes, so these are far above any real one and far
// below what hurts (an alias bomb's 10^9 nodes, a 50 MB scalar, a million
// nested brackets).
struct YamlLimits {
  std::size_t max_bytes = 1 << 20;
  int max_depth = 64;
  std::size_t max_scalar = 64 * 1024;
  std::uint64_t max_nodes = 100'000;  // counting each alias as the nodes it repeats
};

// Reads a YAML file, refusing (at `display`:1:1) one over limits.max_bytes
// before reading it.
std::string read_yaml_file(const std::filesystem::path& path, const std::string& display,
                           const YamlLimits& limits = {});

// Parses `text`; a syntax error becomes a ConfigError at yaml-cpp's mark, and
// a document over `limits` one at the place that exceeds them, before any
// node is built.  `document` names the whole in messages.
YamlValue parse_yaml(const std::string& text, const std::string& file, const YamlLimits& limits = {},
                     const std::string& document = "the build matrix");

}  // namespace sb::matrix
