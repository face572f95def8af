#include "sagebuild/matrix/yaml_reader.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_map>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "sagebuild/common/fs.h"
#include "sagebuild/common/text.h"
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
    : node_(std::move(node)), file_(std::move(file)), what_(std::move(what)), fallback_(std::move(fallback)) {}

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
  return "'" + clip(node_.Scalar(), 80) + "'";
}

Located YamlValue::scalar() const {
  if (!node_.IsDefined() || !node_.IsScalar()) fail("expected a single value for " + what_ + ", got " + kind());
  return Located{node_.Scalar(), where()};
}

bool YamlValue::boolean() const {
  Located v = scalar();
  if (v.text == "true") return true;
  if (v.text == "false") return false;
  fail("expected true or false for " + what_ + ", got " + kind());
}

std::vector<YamlValue> YamlValue::list() const {
  if (!node_.IsSequence()) fail("expected a list for " + what_ + " (like [a, b]), got " + kind());
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
  std::unordered_map<std::string, std::size_t> seen;  // key -> its entry
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    YamlValue key(it->first, file_, "a key of " + what_, where());
    Located name = key.scalar();
    auto [first, fresh] = seen.emplace(name.text, entries.size());
    if (!fresh)
      throw ConfigError(name.where, "duplicate " + std::string(noun) + " '" + clip(name.text, 80) +
                                        "' (first defined at " + line_of(entries[first->second].first.where) + ")");
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
      throw ConfigError(key.where, "unknown key '" + key.text + "' in " + what_ + did_you_mean(key.text, keys) +
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

namespace {

// A first pass over the document's events (no nodes built) that measures
// what building and walking it would cost: nesting depth, scalar sizes, and
// the node count with every alias expanded (an anchor's size is known when
// its node ends, so an alias costs one lookup).  An alias to a node that is
// still open would make a cycle; it is refused too.
class ShapeCheck : public YAML::EventHandler {
 public:
  ShapeCheck(const std::string& file, const YamlLimits& limits) : file_(file), lim_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (value.size() > lim_.max_scalar)
      fail(mark, "a value of " + std::to_string(value.size()) + " bytes; a build matrix value is at most " +
                     std::to_string(lim_.max_scalar) + " bytes");
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = sizes_.find(anchor);
    if (it == sizes_.end()) fail(mark, "an alias to a node that contains it (a cycle)");
    count(mark, it->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    YAML::anchor_t anchor;
    std::uint64_t nodes_before;
  };

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    throw ConfigError(location_of(mark, file_), what);
  }
  void count(const YAML::Mark& mark, std::uint64_t n) {
    nodes_ += n;
    if (nodes_ > lim_.max_nodes)
      fail(mark, "the document expands to more than " + std::to_string(lim_.max_nodes) +
                     " values here (anchors and aliases repeat what they name); a build matrix has a few hundred");
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    count(mark, 1);
    if (anchor) sizes_[anchor] = 1;
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (static_cast<int>(stack_.size()) >= lim_.max_depth)
      fail(mark, "lists and mappings nested more than " + std::to_string(lim_.max_depth) + " deep");
    count(mark, 1);
    stack_.push_back({anchor, nodes_ - 1});
  }
  void close() {
    Open o = stack_.back();
    stack_.pop_back();
    if (o.anchor) sizes_[o.anchor] = nodes_ - o.nodes_before;
  }

  const std::string& file_;
  const YamlLimits& lim_;
  std::vector<Open> stack_;
  std::map<YAML::anchor_t, std::uint64_t> sizes_;
  std::uint64_t nodes_ = 0;
};

}  // namespace

static std::string too_big(std::uintmax_t size, const YamlLimits& limits) {
  return "the file is " + std::to_string(size) + " bytes; a build matrix is at most " +
         std::to_string(limits.max_bytes) + " bytes";
}

std::string read_yaml_file(const std::filesystem::path& path, const std::string& display, const YamlLimits& limits) {
  // The one way to read an operator's file (fs.h): a FIFO, /dev/zero or a
  // directory is refused before anything is read, as is a file over the cap
  // (said here at file:1:1, as the matrix's other errors are).
  try {
    return read_file_capped(path, limits.max_bytes, "the YAML file");
  } catch (const FileTooLarge& e) {
    throw ConfigError(SourceLocation{display, 1, 1}, too_big(e.size(), limits));
  }
}

YamlValue parse_yaml(const std::string& text, const std::string& file, const YamlLimits& limits,
                     const std::string& document) {
  auto shared_file = std::make_shared<const std::string>(file);
  if (text.size() > limits.max_bytes) throw ConfigError(SourceLocation{file, 1, 1}, too_big(text.size(), limits));
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    ShapeCheck shape(file, limits);
    while (parser.HandleNextDocument(shape)) {
    }
    return YamlValue(YAML::Load(text), shared_file, document, SourceLocation{file, 1, 1});
  } catch (const YAML::ParserException& e) {
    throw ConfigError(location_of(e.mark, file), "invalid YAML: " + e.msg);
  }
}

}  // namespace sb::matrix
