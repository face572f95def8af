#include "sagebuild/plan/kernel_manifest.h"

#include <algorithm>
#include <cstdio>
#include <regex>

#include <nlohmann/json.hpp>

#include "sagebuild/common/arch.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"

namespace sb::plan {

std::string StableAbiBinding::target_version_macro() const {
  // ((major << 56) | (minor << 48)), as TORCH_VERSION_2_10_0 in torch/csrc/stable/version.h.
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%02X%02X000000000000", target_version.major, target_version.minor);
  return buf;
}

const StableAbiBinding* KernelManifest::stable_binding_for(const matrix::TorchVersion& torch) const {
  if (!stable_abi) return nullptr;
  return torch.minor_release() < stable_abi->min_torch ? nullptr : &*stable_abi;
}

namespace {

[[noreturn]] void bad(const std::string& src, const std::string& where, const std::string& msg) {
  throw ConfigError(SourceLocation{src, 0, 0}, where + ": " + msg);
}

std::vector<std::string> strings(const nlohmann::json& j, const std::string& src, const std::string& key,
                                 bool required) {
  std::vector<std::string> out;
  if (!j.contains(key)) {
    if (required) bad(src, key, "missing (expected a list of strings)");
    return out;
  }
  const auto& v = j[key];
  if (!v.is_array()) bad(src, key, "expected a list of strings");
  for (const auto& e : v) {
    if (!e.is_string() || e.get<std::string>().empty()) bad(src, key, "expected non-empty strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Arch family_arch(const nlohmann::json& v, const std::string& src, const std::string& where) {
  if (!v.is_string()) bad(src, where, "expected a string such as \"8.0\" or \"9.0a\"");
  if (auto arch = parse_arch(v.get<std::string>())) return *arch;
  bad(src, where, not_an_arch(v.get<std::string>()));
}

// Exactly one of min_arch (a floor) and archs (exact targets).
void read_targets(const nlohmann::json& fam, const std::string& src, const std::string& where, KernelFamily& f) {
  bool has_min = fam.contains("min_arch"), has_archs = fam.contains("archs");
  if (has_min && has_archs)
    bad(src, where,
        "gives both min_arch and archs; expected exactly one (min_arch: built for every row arch at "
        "or above it; archs: exactly these targets)");
  if (!has_min && !has_archs)
    bad(src, where,
        "missing min_arch or archs; expected exactly one, e.g. \"min_arch\": \"8.0\" or "
        "\"archs\": [\"9.0a\"]");
  if (has_min) {
    f.min_arch = family_arch(fam["min_arch"], src, where + ".min_arch");
    return;
  }
  const auto& list = fam["archs"];
  if (!list.is_array() || list.empty())
    bad(src, where + ".archs", "expected a non-empty list of targets such as [\"9.0a\"]");
  for (std::size_t i = 0; i < list.size(); ++i) {
    Arch a = family_arch(list[i], src, where + ".archs[" + std::to_string(i) + "]");
    if (contains_arch(f.archs, a))
      bad(src, where + ".archs", "lists \"" + a.name() + "\" twice; expected each target once");
    f.archs.push_back(std::move(a));
  }
}

matrix::TorchVersion torch_minor_key(const nlohmann::json& j, const std::string& src, const std::string& key) {
  const std::string where = "binding.stable_abi." + key;
  if (!j.contains(key) || !j[key].is_string()) bad(src, where, "expected a torch release string such as \"2.10\"");
  auto v = matrix::TorchVersion::parse(j[key].get<std::string>());
  if (!v)
    bad(src, where, "\"" + j[key].get<std::string>() + "\" is not a torch release <major>.<minor>, e.g. \"2.10\"");
  return v->minor_release();
}

StableAbiBinding parse_stable_abi(const nlohmann::json& j, const std::string& src) {
  if (!j.is_object())
    bad(src, "binding.stable_abi",
        "expected an object {sources: [one file], min_torch: \"2.10\", target_version: \"2.10\"}");
  for (const auto& [key, value] : j.items())
    if (key != "sources" && key != "min_torch" && key != "target_version")
      bad(src, "binding.stable_abi." + key, "unknown key (expected sources, min_torch, target_version)");
  auto sources = strings(j, src, "sources", true);
  if (sources.size() != 1)
    bad(src, "binding.stable_abi.sources", "expected exactly one file, got " + std::to_string(sources.size()));
  StableAbiBinding s{sources.front(), torch_minor_key(j, src, "min_torch"), torch_minor_key(j, src, "target_version")};
  if (s.target_version < matrix::TorchVersion{2, 10})
    bad(src, "binding.stable_abi.target_version",
        s.target_version.str() +
            " is older than 2.10, the first release "
            "with stable ABI version targeting (TORCH_TARGET_VERSION)");
  if (s.min_torch < s.target_version)
    bad(src, "binding.stable_abi.min_torch",
        s.min_torch.str() + " is older than target_version " + s.target_version.str() + ": an extension targeting " +
            s.target_version.str() + " does not load on torch " + s.min_torch.str());
  return s;
}

}  // namespace

KernelManifest parse_kernel_manifest(std::string_view text, const std::string& src) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    bad(src, "json", e.what());
  }
  if (!j.is_object()) bad(src, "top level", "expected an object with families, binding, include_dirs");
  KernelManifest m;
  m.path = src;
  if (!j.contains("families") || !j["families"].is_object() || j["families"].empty())
    bad(src, "families", "expected a non-empty object {name: {sources, min_arch or archs}}");
  for (const auto& [name, fam] : j["families"].items()) {
    std::string where = "families." + name;
    if (!fam.is_object()) bad(src, where, "expected an object with sources and min_arch or archs");
    KernelFamily f;
    f.name = name;
    f.sources = strings(fam, src, "sources", true);
    if (f.sources.empty()) bad(src, where + ".sources", "expected at least one source");
    read_targets(fam, src, where, f);
    if (fam.contains("symbol_marker")) {
      if (!fam["symbol_marker"].is_string()) bad(src, where + ".symbol_marker", "expected a string");
      f.symbol_marker = fam["symbol_marker"].get<std::string>();
    }
    m.families.push_back(std::move(f));
  }
  std::sort(m.families.begin(), m.families.end(),
            [](const KernelFamily& a, const KernelFamily& b) { return a.name < b.name; });
  if (!j.contains("binding") || !j["binding"].is_object()) bad(src, "binding", "expected an object {sources: [...]}");
  m.binding_sources = strings(j["binding"], src, "sources", true);
  if (m.binding_sources.empty()) bad(src, "binding.sources", "expected at least one source");
  if (j["binding"].contains("stable_abi")) m.stable_abi = parse_stable_abi(j["binding"]["stable_abi"], src);
  m.include_dirs = strings(j, src, "include_dirs", false);
  m.nvcc_flags = strings(j, src, "nvcc_flags", false);
  m.cxx_flags = strings(j, src, "cxx_flags", false);
  m.binding_defines = strings(j["binding"], src, "defines", false);
  if (j.contains("link")) {
    const auto& l = j["link"];
    if (!l.is_object()) bad(src, "link", "expected an object such as {\"cudart\": \"static\"}");
    if (l.contains("cudart")) {
      std::string c = l["cudart"].is_string() ? l["cudart"].get<std::string>() : "";
      if (c != "static" && c != "shared") bad(src, "link.cudart", "expected \"static\" or \"shared\"");
      m.cudart_static = c == "static";
    }
  }
  return m;
}

KernelManifest load_kernel_manifest(const std::filesystem::path& path) {
  return parse_kernel_manifest(read_file(path), path.string());
}

}  // namespace sb::plan
