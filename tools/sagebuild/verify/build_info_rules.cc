#include "sagebuild/verify/build_info_rules.h"

#include <algorithm>

#include "sagebuild/wheel/build_tag.h"
#include "sagebuild/wheel/names.h"
#include "sagebuild/wheel/requirement.h"

namespace sb::verify {

using distinfo::BuildInfo;

namespace {

// "3.10" -> "cp310"
std::string cp_tag(const std::string& python) {
  std::string t = "cp";
  for (char c : python)
    if (c != '.') t += c;
  return t;
}

bool same_release(const wheel::Version& v, const std::string& text) {
  auto parsed = wheel::parse_version(text);
  return parsed && *parsed == v;
}

void check_decoded(const wheel::TorchCudaVersions& decoded, const BuildInfo& b, const std::string& scheme,
                   const std::string& member, Findings& out) {
  if (!same_release(decoded.torch, b.torch.version))
    add(out, "B2", Severity::Error, member, scheme + " encodes torch " + decoded.torch.str(),
        "torch " + b.torch.version + " (build_info.torch.version)");
  if (!same_release(decoded.cuda, b.cuda.version))
    add(out, "B2", Severity::Error, member, scheme + " encodes CUDA " + decoded.cuda.str(),
        "CUDA " + b.cuda.version + " (build_info.cuda.version)");
}

void check_build_tag(const BuildInfo& b, const wheel::WheelFilename& fn, const std::string& member, Findings& out) {
  if (fn.build_tag != b.wheel.build_tag)
    add(out, "B2", Severity::Error, member, "file name build tag '" + fn.build_tag.value_or("") + "'",
        "'" + b.wheel.build_tag.value_or("") + "' (build_info.wheel.build_tag)");
  if (!fn.build_tag) return;
  std::string why;
  auto decoded = wheel::decode_build_tag(*fn.build_tag, &why);
  if (!decoded)
    add(out, "B2", Severity::Error, member, "build tag '" + *fn.build_tag + "' is not ours: " + why,
        "<torch code>.<cuda code>, e.g. 280.129");
  else
    check_decoded(*decoded, b, "build tag " + *fn.build_tag, member, out);
}

void check_local_version(const BuildInfo& b, const wheel::WheelFilename& fn, const std::string& member, Findings& out) {
  std::string local = fn.version.local_str();
  if (local != b.wheel.local_version.value_or(""))
    add(out, "B2", Severity::Error, member, "local version '" + local + "'",
        "'" + b.wheel.local_version.value_or("") + "' (build_info.wheel.local_version)");
  if (local.empty()) return;
  std::string why;
  auto decoded = wheel::decode_local_version(local, &why);
  if (!decoded)
    add(out, "B2", Severity::Error, member, "local version '" + local + "' is not ours: " + why,
        "cu<cuda code>torch<version>, e.g. cu128torch2.9.0");
  else
    check_decoded(*decoded, b, "local version +" + local, member, out);
}

}  // namespace

std::optional<BuildInfo> load_build_info(std::string_view text, const std::string& member, Findings& out) {
  try {
    return distinfo::parse_build_info(text);
  } catch (const distinfo::BuildInfoError& e) {
    add(out, "B1", Severity::Error, member, e.what(), "build_info.json as sagebuild writes it (schema 1)");
  }
  return std::nullopt;
}

void check_build_info_filename(const BuildInfo& b, const wheel::WheelFilename& fn, const std::string& member,
                               Findings& out) {
  if (!wheel::same_project(fn.name, b.package))
    add(out, "B2", Severity::Error, member, "file name project '" + fn.name + "'",
        "'" + b.package + "' (build_info.package)");
  if (fn.version.public_str() != b.version && !same_release(fn.version.public_version(), b.version))
    add(out, "B2", Severity::Error, member, "file name version " + fn.version.public_str(),
        b.version + " (build_info.version)");
  if (!fn.build_tag && fn.version.local.empty())
    add(out, "B2", Severity::Error, member, "the file name carries neither a build tag nor a local version",
        "torch and CUDA encoded in one of them");
  check_build_tag(b, fn, member, out);
  check_local_version(b, fn, member, out);
}

void check_build_info_tags(const BuildInfo& b, const wheel::WheelFilename& fn,
                           const std::vector<std::string>& wheel_tag_lines, const std::string& member, Findings& out) {
  std::string want = b.wheel.python_tag + "-" + b.wheel.abi_tag + "-" + b.wheel.platform_tag;
  std::vector<std::string> have;
  for (const auto& t : fn.expanded()) have.push_back(t.str());
  if (have != std::vector<std::string>{want})
    add(out, "B3", Severity::Error, member, "file name tags " + fn.tag_sets().str(), want + " (build_info.wheel)");
  if (wheel_tag_lines != std::vector<std::string>{want}) {
    std::string lines;
    for (const auto& t : wheel_tag_lines) lines += (lines.empty() ? "" : ", ") + t;
    add(out, "B3", Severity::Error, member, "WHEEL Tag lines [" + lines + "]", "exactly one: " + want);
  }
  if (b.platform != b.wheel.platform_tag)
    add(out, "B3", Severity::Error, member, "build_info.platform '" + b.platform + "'",
        "'" + b.wheel.platform_tag + "' (build_info.wheel.platform_tag)");
}

void check_torch_pin(const BuildInfo& b, const std::vector<std::string>& requires_dist,
                     std::optional<wheel::TorchBinding> binding, const std::string& member, Findings& out) {
  std::vector<wheel::Requirement> pins;
  for (const auto& text : requires_dist) {
    auto r = wheel::parse_requirement(text);
    if (r && wheel::canonicalize_name(r->name) == "torch") pins.push_back(*r);
  }
  // What the rule writes for this build, where the binding is known.
  std::string want = binding == wheel::TorchBinding::classic
                         ? "Requires-Dist: " + wheel::torch_requirement(*binding, b.torch.version)
                     : binding == wheel::TorchBinding::stable_abi
                         ? "Requires-Dist: torch>=<stable-ABI target>,<next major>, e.g. torch>=2.10,<3"
                         : "Requires-Dist: torch admitting " + b.torch.version;
  if (pins.size() != 1) {
    add(out, "B4", Severity::Error, member, std::to_string(pins.size()) + " Requires-Dist lines name torch",
        "exactly one, " + want);
    return;
  }
  if (pins[0].marker) {
    add(out, "B4", Severity::Error, member, "torch requirement '" + pins[0].str() + "' has a marker",
        want + ", on every platform the wheel is for");
    return;
  }
  std::string problem = wheel::torch_requirement_problem(pins[0], b.torch.version, binding);
  if (!problem.empty()) add(out, "B4", Severity::Error, member, "torch requirement " + problem, want);
}

void check_python_coverage(const BuildInfo& b, const std::string& member, Findings& out) {
  std::vector<std::string> sorted = b.pythons;
  std::sort(sorted.begin(), sorted.end(), [](const std::string& x, const std::string& y) {
    return *wheel::parse_version(x) < *wheel::parse_version(y);  // "3.9" < "3.10"
  });
  for (const auto& p : b.pythons)
    if (!wheel::parse_version(p)) {
      add(out, "B5", Severity::Error, member, "build_info.pythons has '" + p + "'", "versions like \"3.12\"");
      return;
    }
  bool abi3 = b.abi_mode == wheel::AbiMode::abi3;
  if (abi3 != (b.wheel.abi_tag == "abi3"))
    add(out, "B5", Severity::Error, member,
        std::string("abi_mode '") + (abi3 ? "abi3" : "cpython") + "' with ABI tag '" + b.wheel.abi_tag + "'",
        abi3 ? "abi3" : "cpXY (per-interpreter)");
  if (!abi3 && b.pythons.size() != 1)
    add(out, "B5", Severity::Error, member, std::to_string(b.pythons.size()) + " pythons for a per-interpreter wheel",
        "exactly one");
  std::string floor = cp_tag(sorted.front());
  if (b.wheel.python_tag != floor)
    add(out, "B5", Severity::Error, member, "python tag '" + b.wheel.python_tag + "'",
        "'" + floor + "' (the lowest of build_info.pythons)");
  if (!abi3 && b.wheel.abi_tag != floor)
    add(out, "B5", Severity::Error, member, "ABI tag '" + b.wheel.abi_tag + "'", "'" + floor + "'");
}

}  // namespace sb::verify
