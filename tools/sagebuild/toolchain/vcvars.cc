#include "sagebuild/toolchain/vcvars.h"

#include <algorithm>

#include "sagebuild/run/win_cmdline.h"
#include "sagebuild/run/win_path.h"

namespace sb::toolchain {

using run::cmd_batch_line;
using run::win_iequals;
using run::win_join;

std::string vcvars64_path(std::string_view installation_path) {
  return win_join(installation_path, "VC\\Auxiliary\\Build\\vcvars64.bat");
}

std::string vcvars_command_line(std::string_view vcvars_bat) {
  // vcvars prints a banner on stdout; >nul keeps it out of the `set` output.
  return cmd_batch_line(vcvars_bat, {}, ">nul && set");
}

SetOutput parse_set_output(std::string_view text) {
  SetOutput out;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::size_t eq = line.find('=');
    // "=C:=C:\dir" (per-drive directories) start with '=': not variables.
    if (eq == std::string_view::npos || eq == 0) {
      out.other_lines.emplace_back(line);
      continue;
    }
    out.env.set(line.substr(0, eq), line.substr(eq + 1));
  }
  return out;
}

std::vector<std::string> split_path_list(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    std::size_t semi = value.find(';');
    std::string_view item = value.substr(0, semi);
    if (!item.empty()) out.emplace_back(item);
    if (semi == std::string_view::npos) break;
    value.remove_prefix(semi + 1);
  }
  return out;
}

namespace {

bool is_list_variable(std::string_view name) {
  for (const char* list : {"PATH", "INCLUDE", "LIB", "LIBPATH", "EXTERNAL_INCLUDE"}) {
    if (win_iequals(name, list)) return true;
  }
  return false;
}

std::string_view trim_trailing_backslash(std::string_view entry) {
  if (entry.size() > 3 && entry.back() == '\\') entry.remove_suffix(1);
  return entry;
}

std::vector<std::string> added_entries(std::string_view before, std::string_view after) {
  std::vector<std::string> old = split_path_list(before), added;
  for (auto& entry : split_path_list(after)) {
    bool known = std::any_of(old.begin(), old.end(), [&](const std::string& o) {
      return win_iequals(trim_trailing_backslash(o), trim_trailing_backslash(entry));
    });
    if (!known) added.push_back(std::move(entry));
  }
  return added;
}

}  // namespace

std::vector<EnvChange> diff_environment(const Environment& base, const Environment& after) {
  std::vector<EnvChange> changes;
  for (const auto& v : after.vars()) {
    const std::string* old = base.get(v.name);
    if (old && *old == v.value) continue;
    EnvChange c{v.name, v.value, false, {}};
    if (is_list_variable(v.name)) c.added_entries = added_entries(old ? *old : "", v.value);
    changes.push_back(std::move(c));
  }
  for (const auto& v : base.vars()) {
    if (!after.get(v.name)) changes.push_back(EnvChange{v.name, {}, true, {}});
  }
  return changes;
}

const std::vector<std::string>& vcvars_required_names() {
  static const std::vector<std::string> names{"INCLUDE",           "LIB",          "LIBPATH", "PATH",
                                              "VCToolsInstallDir", "WindowsSdkDir"};
  return names;
}

std::vector<std::string> missing_vcvars_names(const Environment& env) {
  std::vector<std::string> missing;
  for (const auto& name : vcvars_required_names()) {
    if (!env.get(name)) missing.push_back(name);
  }
  return missing;
}

}  // namespace sb::toolchain
