#include "sagebuild/toolchain/vswhere.h"

#include <nlohmann/json.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_path.h"

namespace sb::toolchain {

using run::win_join;

std::string default_vswhere_path(std::string_view program_files_x86) {
  return win_join(program_files_x86, "Microsoft Visual Studio\\Installer\\vswhere.exe");
}

std::vector<std::string> vswhere_argv(std::string_view vswhere_exe) {
  return {std::string(vswhere_exe),       "-latest", "-products", "*",    "-requires",
          std::string(kVcToolsComponent), "-format", "json",      "-utf8"};
}

namespace {

std::string string_field(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool bool_field(const nlohmann::json& obj, const char* key, bool fallback) {
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (it->is_boolean()) return it->get<bool>();
  // Older vswhere versions wrote 0/1.
  if (it->is_number_integer()) return it->get<int>() != 0;
  return fallback;
}

}  // namespace

std::vector<VsInstall> parse_vswhere_json(std::string_view json, std::string_view origin) {
  SourceLocation where{std::string(origin)};
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    throw ConfigError(where,
                      "vswhere did not print valid JSON; expected the output of "
                      "`vswhere -format json`, a JSON array of installs");
  }
  if (!doc.is_array()) {
    throw ConfigError(where, "expected a JSON array of installs, found a JSON " + std::string(doc.type_name()));
  }
  std::vector<VsInstall> out;
  for (const auto& item : doc) {
    if (!item.is_object()) {
      throw ConfigError(where,
                        "expected every install to be a JSON object, found a JSON " + std::string(item.type_name()));
    }
    VsInstall vs;
    vs.installation_path = string_field(item, "installationPath");
    vs.installation_version = string_field(item, "installationVersion");
    vs.display_name = string_field(item, "displayName");
    vs.is_prerelease = bool_field(item, "isPrerelease", false);
    vs.is_complete = bool_field(item, "isComplete", true);
    if (!vs.installation_path.empty()) out.push_back(std::move(vs));
  }
  return out;
}

namespace {

// The next dot-separated number from `s` at `pos`; 0 when absent or not a number.
unsigned long long next_number(std::string_view s, std::size_t& pos) {
  unsigned long long n = 0;
  bool digits = true;
  while (pos < s.size() && s[pos] != '.') {
    char c = s[pos++];
    if (c < '0' || c > '9') digits = false;
    if (digits && n < 1'000'000'000'000ull) n = n * 10 + static_cast<unsigned>(c - '0');
  }
  if (pos < s.size()) ++pos;  // the '.'
  return digits ? n : 0;
}

}  // namespace

int compare_dotted_versions(std::string_view a, std::string_view b) {
  std::size_t pa = 0, pb = 0;
  while (pa < a.size() || pb < b.size()) {
    unsigned long long x = next_number(a, pa), y = next_number(b, pb);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::optional<VsInstall> choose_install(const std::vector<VsInstall>& installs, bool allow_prerelease) {
  std::optional<VsInstall> best;
  for (const auto& vs : installs) {
    if (!vs.is_complete || (vs.is_prerelease && !allow_prerelease)) continue;
    if (!best || compare_dotted_versions(vs.installation_version, best->installation_version) > 0) best = vs;
  }
  return best;
}

}  // namespace sb::toolchain
