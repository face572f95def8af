#include "sagebuild/matrix/load_values.h"

#include "sagebuild/common/text.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/suggest.h"
#include "sagebuild/matrix/version.h"

namespace sb::matrix {
namespace {

// The value read by `parse` (one of the version types' parsers), else
// ConfigError saying the shape it must have and an example.
template <typename V>
V typed_version(const Located& value, std::string_view noun, std::optional<V> (*parse)(std::string_view),
                std::string_view shape, std::string_view example) {
  version_text(value, noun);
  auto v = parse(value.text);
  if (!v)
    throw ConfigError(value.where, std::string(noun) + " version '" + value.text + "' is not " + std::string(shape) +
                                       "; write it like \"" + std::string(example) + "\"");
  return *v;
}

// known_list of `choices` (a matrix section's own versions, as written), each
// read back with `parse`, which takes every one of them.
template <typename V>
std::vector<V> known_version_list(const YamlMap& map, std::string_view key, const std::vector<std::string>& choices,
                                  std::string_view noun, std::optional<V> (*parse)(std::string_view),
                                  std::vector<Located>* located, std::string_view hint = {}) {
  std::vector<V> out;
  for (const auto& text : known_list(map, key, choices, noun, located, hint)) out.push_back(*parse(text));
  return out;
}

}  // namespace

void check_known(const Located& value, const std::vector<std::string>& choices, std::string_view noun,
                 std::string_view hint) {
  if (contains(choices, value.text)) return;
  throw ConfigError(value.where, "unknown " + std::string(noun) + " '" + value.text + "'" +
                                     did_you_mean(value.text, choices) + "; valid: " + join(choices) +
                                     std::string(hint));
}

std::string version_text(const Located& value, std::string_view noun) {
  if (!DottedVersion::parse(value.text))
    throw ConfigError(value.where, "'" + value.text + "' is not a " + std::string(noun) +
                                       " version; write digits and dots, like \"12.8\"");
  return value.text;
}

TorchVersion torch_version(const Located& value) {
  return typed_version(value, "torch", &TorchVersion::parse, "<major>.<minor>[.<patch>]", "2.11.0");
}

PythonVersion python_version(const Located& value) {
  return typed_version(value, "Python", &PythonVersion::parse, "<major>.<minor>", "3.12");
}

CudaVersion cuda_version(const Located& value) {
  return typed_version(value, "CUDA", &CudaVersion::parse_release, "<major>.<minor>", "12.8");
}

std::vector<std::string> known_list(const YamlMap& map, std::string_view key, const std::vector<std::string>& choices,
                                    std::string_view noun, std::vector<Located>* located, std::string_view hint) {
  std::vector<std::string> out;
  auto value = map.get(key);
  if (!value) return out;
  for (const Located& item : value->scalar_list()) {
    check_known(item, choices, noun, hint);
    out.push_back(item.text);
    if (located) located->push_back(item);
  }
  return out;
}

std::vector<CudaVersion> known_cuda_list(const YamlMap& map, std::string_view key, const Matrix& m,
                                         std::vector<Located>* located) {
  return known_version_list(map, key, cuda_versions(m), "CUDA version", &CudaVersion::parse_release, located);
}

std::vector<TorchVersion> known_torch_list(const YamlMap& map, std::string_view key, const Matrix& m,
                                           std::vector<Located>* located) {
  return known_version_list(map, key, torch_versions(m), "torch release", &TorchVersion::parse, located);
}

std::vector<PythonVersion> known_python_list(const YamlMap& map, std::string_view key,
                                             const std::vector<PythonVersion>& pythons, std::vector<Located>* located,
                                             std::string_view hint) {
  return known_version_list(map, key, python_versions(pythons), "Python", &PythonVersion::parse, located, hint);
}

std::string optional_scalar(const YamlMap& map, std::string_view key) {
  auto value = map.get(key);
  return value ? value->scalar().text : std::string();
}

bool optional_bool(const YamlMap& map, std::string_view key) {
  auto value = map.get(key);
  return value && value->boolean();
}

std::vector<std::string> torch_versions(const Matrix& m) {
  std::vector<std::string> out;
  for (const auto& t : m.torch) out.push_back(t.version.str());
  return out;
}
std::vector<std::string> python_versions(const std::vector<PythonVersion>& pythons) {
  std::vector<std::string> out;
  for (const auto& p : pythons) out.push_back(p.str());
  return out;
}
std::vector<std::string> cuda_versions(const Matrix& m) {
  std::vector<std::string> out;
  for (const auto& c : m.cuda) out.push_back(c.version.release_str());
  return out;
}
std::vector<std::string> platform_tags(const Matrix& m) {
  std::vector<std::string> out;
  for (const auto& p : m.platforms) out.push_back(p.tag);
  return out;
}
std::vector<std::string> package_names(const Matrix& m) {
  std::vector<std::string> out;
  for (const auto& p : m.packages) out.push_back(p.name);
  return out;
}

}  // namespace sb::matrix
