#include "sagebuild/verify/extension_suffix.h"

#include <algorithm>
#include <cctype>

namespace sb::verify {

namespace {

// The digits (and a free-threading 't') after `marker` in `name`: "311", "313t".
std::optional<std::string> version_after(std::string_view name, std::string_view marker) {
  auto at = name.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string v;
  for (std::size_t i = at + marker.size(); i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i)
    v += name[i];
  if (v.empty()) return std::nullopt;
  std::size_t next = at + marker.size() + v.size();
  if (next < name.size() && name[next] == 't') v += 't';
  return v;
}

bool has_cp_interpreters_only(const wheel::WheelFilename& fn) {
  return std::all_of(fn.python_tags.begin(), fn.python_tags.end(),
                     [](const std::string& t) { return t.rfind("cp", 0) == 0; });
}

}  // namespace

std::optional<std::string> extension_interpreter(std::string_view member) {
  std::string_view base = member.substr(member.rfind('/') == std::string_view::npos ? 0 : member.rfind('/') + 1);
  if (base.ends_with(".abi3.so")) return "abi3";
  if (base.ends_with(".so"))
    if (auto v = version_after(base, ".cpython-")) return "cp" + *v;
  if (base.ends_with(".pyd"))
    if (auto v = version_after(base, ".cp")) return "cp" + *v;
  return std::nullopt;
}

void check_extension_suffixes(const std::vector<std::string>& members, const wheel::WheelFilename& fn, Findings& out) {
  bool abi3 = std::find(fn.abi_tags.begin(), fn.abi_tags.end(), "abi3") != fn.abi_tags.end();
  for (const auto& m : members) {
    auto interp = extension_interpreter(m);
    if (!interp || *interp == "abi3") continue;
    if (abi3) {
      add(out, "P10", Severity::Strict, m, "abi3 wheel ships the version-specific extension " + m,
          "a .abi3.so (or .pyd) built against the limited API");
      continue;
    }
    if (has_cp_interpreters_only(fn) &&
        std::find(fn.python_tags.begin(), fn.python_tags.end(), *interp) == fn.python_tags.end())
      add(out, "P11", Severity::Strict, m,
          "extension built for " + *interp + " in a wheel tagged " + fn.tag_sets().str(),
          "an extension suffix matching the interpreter tag");
  }
}

}  // namespace sb::verify
