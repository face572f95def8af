#include "sagebuild/matrix/yaml_reader.h"

#include <algorithm>

#include "sagebuild/matrix/suggest.h"

namespace sb::matrix {
namespace {

// yaml-cpp marks are 0-based, with -1 for "no mark"; ours are 1-based, 0 = unknown.
SourceLocation location_of(const YAML::Mark& mark, const std::string& file) {
  if (mark.is_null() || mark.line < 0) return SourceLocation{file, 0, 0};
  return SourceLocation{file, mark.line + 1, mark.column + 1};
}

std::string line_of(const SourceLocation& where) {
  return where.line > 0 ? "line " + std::to_string(where.line) : "another place";
}

}  // namespace

YamlValue::YamlValue(YAML::Node node, std::shared_ptr<const std::string> file, std::string what,
                     SourceLocation fallback)
    : node_(std::move(node)), file_(std::move(file)), what_(std::move(what)),
      fallback_(std::move(fallback)) {}

SourceLocation YamlValue::where() const {
  // An empty value ("key:" then a newline) is marked at the next token, which
  // can be lines away; the key's position is where the user should look.
  if (is_null()) return fallback_;
  SourceLocation at = location_of(node_.Mark(), *file_);
  return at.line > 0 ? at : fallback_;
}

void YamlValue::fail(const std::string& message) const { throw ConfigError(where(), message); }

std::string YamlValue::kind() const {
  if (is_null()) return "nothing";
  if (node_.IsSequence()) return "a list";
  if (node_.IsMap()) return "a mapping";
  return "'" + node_.Scalar() + "'";
}

Located YamlValue::scalar() const {
  if (!node_.IsDefined() || !node_.IsScalar())
    fail("expected a single value for " + what_ + ", got " + kind());
  return Located{node_.Scalar(), where()};
}

bool YamlValue::boolean() const {
  Located v = scalar();
  if (v.text == "true") return true;
  if (v.text == "false") return false;
  fail("expected true or false for " + what_ + ", got " + kind());
}

std::vector<YamlValue> YamlValue::list() const {
  if (!node_.IsSequence())
    fail("expected a list for " + what_ + " (like [a, b]), got " + kind());
  std::vector<YamlValue> items;
  for (const auto& item : node_) items.emplace_back(item, file_, "an entry of " + what_, where());
  return items;
}

std::vector<Located> YamlValue::scalar_list() const {
  std::vector<Located> out;
  for (const auto& item : list()) out.push_back(item.scalar());
  return out;
}

std::vector<std::pair<Located, YamlValue>> YamlValue::named_entries(std::string_view noun) const {
  if (!node_.IsMap()) fail("expected a mapping for " + what_ + ", got " + kind());
  std::vector<std::pair<Located, YamlValue>> entries;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    YamlValue key(it->first, file_, "a key of " + what_, where());
    Located name = key.scalar();
    for (const auto& [seen, unused] : entries)
      if (seen.text == name.text)
        throw ConfigError(name.where, "duplicate " + std::string(noun) + " '" + name.text +
                                          "' (first defined at " + line_of(seen.where) + ")");
    std::string value_what = std::string(noun) + " '" + name.text + "'";
    entries.emplace_back(name, YamlValue(it->second, file_, value_what, name.where));
  }
  return entries;
}

YamlMap YamlValue::map(std::initializer_list<std::string_view> allowed) const {
  std::vector<std::string> keys(allowed.begin(), allowed.end());
  auto entries = named_entries("key");
  for (auto& [key, value] : entries) {
    if (std::find(keys.begin(), keys.end(), key.text) == keys.end())
      throw ConfigError(key.where, "unknown key '" + key.text + "' in " + what_ +
                                       did_you_mean(key.text, keys) +
                                       "; allowed keys: " + join(keys));
    // Messages about a value name its key and where the key sits.
    value = YamlValue(value.node_, file_, "'" + key.text + "' of " + what_, key.where);
  }
  return YamlMap(*this, std::move(entries));
}

YamlMap::YamlMap(YamlValue self, std::vector<std::pair<Located, YamlValue>> entries)
    : self_(std::move(self)), entries_(std::move(entries)) {}

std::optional<YamlValue> YamlMap::get(std::string_view key) const {
  for (const auto& [name, value] : entries_)
    if (name.text == key) return value;
  return std::nullopt;
}

YamlValue YamlMap::required(std::string_view key) const {
  if (auto value = get(key)) return *value;
  self_.fail("missing key '" + std::string(key) + "' in " + self_.what());
}

YamlValue parse_yaml(const std::string& text, const std::string& file) {
  auto shared_file = std::make_shared<const std::string>(file);
  try {
    return YamlValue(YAML::Load(text), shared_file, "the build matrix", SourceLocation{file, 1, 1});
  } catch (const YAML::ParserException& e) {
    throw ConfigError(location_of(e.mark, file), "invalid YAML: " + e.msg);
  }
}

}  // namespace sb::matrix
