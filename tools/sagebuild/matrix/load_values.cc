#include "sagebuild/matrix/load_values.h"

#include "sagebuild/common/text.h"
#include "sagebuild/matrix/lookup.h"
#include "sagebuild/matrix/suggest.h"
#include "sagebuild/matrix/version.h"

namespace sb::matrix {

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
  version_text(value, "torch");
  auto v = TorchVersion::parse(value.text);
  if (!v)
    throw ConfigError(value.where,
                      "torch version '" + value.text + "' is not <major>.<minor>[.<patch>]; write it like \"2.11.0\"");
  return *v;
}

PythonVersion python_version(const Located& value) {
  version_text(value, "Python");
  auto v = PythonVersion::parse(value.text);
  if (!v)
    throw ConfigError(value.where,
                      "Python version '" + value.text + "' is not <major>.<minor>; write it like \"3.12\"");
  return *v;
}

CudaVersion cuda_version(const Located& value) {
  version_text(value, "CUDA");
  auto v = CudaVersion::parse_release(value.text);
  if (!v)
    throw ConfigError(value.where, "CUDA version '" + value.text + "' is not <major>.<minor>; write it like \"12.8\"");
  return *v;
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
  std::vector<CudaVersion> out;
  for (const auto& text : known_list(map, key, cuda_versions(m), "CUDA version", located))
    out.push_back(*CudaVersion::parse_release(text));  // one of `cuda:`'s, which parse
  return out;
}

std::vector<TorchVersion> known_torch_list(const YamlMap& map, std::string_view key, const Matrix& m,
                                           std::vector<Located>* located) {
  std::vector<TorchVersion> out;
  for (const auto& text : known_list(map, key, torch_versions(m), "torch release", located))
    out.push_back(*TorchVersion::parse(text));  // one of `torch:`'s, which parse
  return out;
}

std::vector<PythonVersion> known_python_list(const YamlMap& map, std::string_view key,
                                             const std::vector<PythonVersion>& pythons, std::vector<Located>* located,
                                             std::string_view hint) {
  std::vector<PythonVersion> out;
  for (const auto& text : known_list(map, key, python_versions(pythons), "Python", located, hint))
    out.push_back(*PythonVersion::parse(text));  // one of `pythons:`'s, which parse
  return out;
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
