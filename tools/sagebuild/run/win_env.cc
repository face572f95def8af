#include "sagebuild/run/win_env.h"

#include <algorithm>

#include "sagebuild/common/error.h"
#include "sagebuild/run/win_path.h"

namespace sb::run {

void Environment::set(std::string_view name, std::string_view value) {
  for (auto& v : vars_) {
    if (win_iequals(v.name, name)) {
      v.value = std::string(value);
      return;
    }
  }
  vars_.push_back(Var{std::string(name), std::string(value)});
}

const std::string* Environment::get(std::string_view name) const {
  for (const auto& v : vars_) {
    if (win_iequals(v.name, name)) return &v.value;
  }
  return nullptr;
}

bool Environment::remove(std::string_view name) {
  auto it = std::find_if(vars_.begin(), vars_.end(), [&](const Var& v) { return win_iequals(v.name, name); });
  if (it == vars_.end()) return false;
  vars_.erase(it);
  return true;
}

Environment environment_from_entries(const std::vector<std::string>& entries) {
  Environment env;
  for (const auto& e : entries) {
    std::size_t eq = e.find('=', 1);
    if (e.empty() || eq == std::string::npos) continue;
    env.set(std::string_view(e).substr(0, eq), std::string_view(e).substr(eq + 1));
  }
  return env;
}

Environment apply_overrides(Environment base, const std::map<std::string, std::optional<std::string>>& overrides) {
  for (const auto& [name, value] : overrides) {
    if (name.empty() || name.find('=') != std::string::npos)
      throw UsageError("environment variable name '" + name +
                       "' cannot be passed to a Windows process: expected a non-empty name without '='");
    if (value)
      base.set(name, *value);
    else
      base.remove(name);
  }
  return base;
}

namespace {

std::string upper_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  return out;
}

}  // namespace

std::vector<std::string> environment_block_entries(const Environment& env) {
  std::vector<Environment::Var> vars = env.vars();
  std::stable_sort(vars.begin(), vars.end(), [](const Environment::Var& a, const Environment::Var& b) {
    return upper_ascii(a.name) < upper_ascii(b.name);
  });
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& v : vars) out.push_back(v.name + "=" + v.value);
  return out;
}

}  // namespace sb::run
