// Platform tag families (platform.h): one classifier per family, each
// returning what it parsed or why the tag is malformed for that family.
#include "sagebuild/wheel/platform.h"

#include <algorithm>
#include <array>
#include <set>

#include "sagebuild/wheel/names.h"

namespace sb::wheel {
namespace {

// The newest macOS major version (macOS 26, 2025). PyPI refuses tags naming a
// macOS that does not exist yet; raise this when Apple ships a new one.
constexpr unsigned kNewestMacosMajor = 26;

constexpr std::array<std::string_view, 11> kMacosArches = {"x86_64",    "arm64",      "intel", "fat", "fat3", "fat64",
                                                           "universal", "universal2", "i386",  "ppc", "ppc64"};
constexpr std::array<std::string_view, 4> kAndroidAbis = {"armeabi_v7a", "arm64_v8a", "x86", "x86_64"};
constexpr std::array<std::string_view, 2> kIosArches = {"arm64", "x86_64"};
constexpr std::array<std::string_view, 2> kIosSdks = {"iphoneos", "iphonesimulator"};

template <std::size_t N>
bool one_of(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// Reads "<digits>_" from the front of `s`; false when there is none.
bool take_number(std::string_view& s, unsigned& out) {
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0 || n > 9 || n >= s.size() || s[n] != '_') return false;
  out = static_cast<unsigned>(std::stoul(std::string(s.substr(0, n))));
  s.remove_prefix(n + 1);
  return true;
}

PlatformInfo malformed(PlatformFamily f, std::string problem, bool strict) {
  PlatformInfo info;
  info.family = f;
  info.problem = std::move(problem);
  info.strict_problem = strict;
  return info;
}

// "<prefix>X_Y_ARCH" as used by manylinux, musllinux, macosx and ios.
bool take_x_y(std::string_view& rest, PlatformInfo& info) {
  return take_number(rest, info.major) && take_number(rest, info.minor) && !rest.empty();
}

PlatformInfo classify_glibc_like(std::string_view p, PlatformFamily family, std::string_view prefix) {
  PlatformInfo info;
  info.family = family;
  // "manylinux" alone, or "manylinuxX_..." past the legacy aliases, reaches
  // here without the "manylinux_" prefix (found by fuzzing `index`).
  if (!p.starts_with(prefix)) return malformed(family, "'" + std::string(p) + "' is malformed", true);
  std::string_view rest = p.substr(prefix.size());
  if (!take_x_y(rest, info)) return malformed(family, "'" + std::string(p) + "' is malformed", true);
  info.arch = std::string(rest);
  return info;
}

PlatformInfo classify_legacy_manylinux(std::string_view p) {
  struct Alias {
    std::string_view prefix;
    unsigned minor;
  };
  for (Alias a : {Alias{"manylinux1_", 5}, Alias{"manylinux2010_", 12}, Alias{"manylinux2014_", 17}}) {
    if (!p.starts_with(a.prefix)) continue;
    PlatformInfo info;
    info.family = PlatformFamily::Manylinux;
    info.major = 2;
    info.minor = a.minor;
    info.legacy_alias = true;
    info.arch = std::string(p.substr(a.prefix.size()));
    if (info.arch.empty())
      return malformed(PlatformFamily::Manylinux, "'" + std::string(p) + "' has no architecture", true);
    return info;
  }
  return classify_glibc_like(p, PlatformFamily::Manylinux, "manylinux_");
}

PlatformInfo classify_macos(std::string_view p) {
  PlatformInfo info = classify_glibc_like(p, PlatformFamily::Macos, "macosx_");
  if (!info.problem.empty()) return info;
  std::string problem;
  if (info.major < 10)
    problem = "macOS " + std::to_string(info.major) + " predates macOS 10";
  else if (info.major >= 11 && info.minor != 0)
    problem =
        "macOS 11 and later are tagged X_0, found " + std::to_string(info.major) + "_" + std::to_string(info.minor);
  else if (info.major > kNewestMacosMajor)
    problem = "macOS " + std::to_string(info.major) +
              " does not exist yet (newest known: " + std::to_string(kNewestMacosMajor) + ")";
  else if (!one_of(info.arch, kMacosArches))
    problem = "unknown macOS architecture '" + info.arch + "'";
  if (!problem.empty()) {
    info.problem = "'" + std::string(p) + "': " + problem;
    info.strict_problem = true;  // PyPI refuses these tags
  }
  return info;
}

PlatformInfo classify_android(std::string_view p) {
  PlatformInfo info;
  info.family = PlatformFamily::Android;
  std::string_view rest = p.substr(std::string_view("android_").size());
  if (!take_number(rest, info.major) || !one_of(rest, kAndroidAbis))
    return malformed(PlatformFamily::Android,
                     "'" + std::string(p) +
                         "': expected android_APILEVEL_ABI with ABI one of "
                         "armeabi_v7a, arm64_v8a, x86, x86_64",
                     true);
  info.arch = std::string(rest);
  return info;
}

PlatformInfo classify_ios(std::string_view p) {
  PlatformInfo info;
  info.family = PlatformFamily::Ios;
  std::string_view rest = p.substr(std::string_view("ios_").size());
  bool ok = take_x_y(rest, info);
  std::size_t sep = rest.rfind('_');
  if (ok && sep != std::string_view::npos && one_of(rest.substr(0, sep), kIosArches) &&
      one_of(rest.substr(sep + 1), kIosSdks)) {
    info.arch = std::string(rest.substr(0, sep));
    return info;
  }
  return malformed(PlatformFamily::Ios,
                   "'" + std::string(p) + "': expected ios_X_Y_{arm64|x86_64}_{iphoneos|iphonesimulator}", true);
}

PlatformInfo classify_emscripten(std::string_view p) {
  PlatformInfo info;
  info.family = PlatformFamily::Emscripten;
  std::string_view rest = p.substr(std::string_view("pyemscripten_").size());
  if (!take_x_y(rest, info) || rest != "wasm32")
    return malformed(PlatformFamily::Emscripten, "'" + std::string(p) + "': expected pyemscripten_YEAR_PATCH_wasm32",
                     true);
  info.arch = "wasm32";
  return info;
}

PlatformInfo classify_windows(std::string_view p) {
  PlatformInfo info;
  info.family = PlatformFamily::Windows;
  if (p == "win32")
    info.arch = "x86";
  else if (p == "win_amd64")
    info.arch = "amd64";
  else if (p == "win_arm64")
    info.arch = "arm64";
  else if (p == "win_ia64")
    info.arch = "ia64";
  else
    return malformed(PlatformFamily::Windows,
                     "unknown Windows platform '" + std::string(p) + "'; expected win32, win_amd64 or win_arm64",
                     false);
  return info;
}

PlatformInfo classify_linux(std::string_view p) {
  PlatformInfo info;
  info.family = PlatformFamily::Linux;
  info.arch = std::string(p.substr(std::string_view("linux_").size()));
  if (info.arch.empty()) return malformed(PlatformFamily::Linux, "'linux_' has no architecture", false);
  return info;
}

bool is_linux_like(PlatformFamily f) {
  return f == PlatformFamily::Linux || f == PlatformFamily::Manylinux || f == PlatformFamily::Musllinux;
}

void check_mixtures(const std::vector<PlatformInfo>& infos, std::string_view member, Findings& out) {
  std::set<PlatformFamily> families;
  std::set<std::string> linux_arches;
  for (const auto& i : infos) {
    families.insert(i.family);
    if (is_linux_like(i.family) && !i.arch.empty()) linux_arches.insert(i.arch);
  }
  if (families.count(PlatformFamily::Any) && families.size() > 1)
    add(out, "F8", Severity::Warning, std::string(member), "'any' mixed with platform-specific tags",
        "either 'any' alone or only real platforms");
  if (families.count(PlatformFamily::Manylinux) && families.count(PlatformFamily::Musllinux))
    add(out, "F8", Severity::Warning, std::string(member),
        "manylinux and musllinux tags in one wheel (auditwheel refuses mixed libcs)", "one libc family per wheel");
  if (linux_arches.size() > 1)
    add(out, "F8", Severity::Warning, std::string(member),
        "Linux tags for " + std::to_string(linux_arches.size()) +
            " architectures in one wheel (auditwheel refuses them)",
        "one architecture per Linux wheel");
}

}  // namespace

std::string_view to_string(PlatformFamily f) {
  switch (f) {
    case PlatformFamily::Any:
      return "any";
    case PlatformFamily::Windows:
      return "windows";
    case PlatformFamily::Linux:
      return "linux";
    case PlatformFamily::Manylinux:
      return "manylinux";
    case PlatformFamily::Musllinux:
      return "musllinux";
    case PlatformFamily::Macos:
      return "macos";
    case PlatformFamily::Android:
      return "android";
    case PlatformFamily::Ios:
      return "ios";
    case PlatformFamily::Emscripten:
      return "pyemscripten";
    case PlatformFamily::Unknown:
      return "unknown";
  }
  return "unknown";
}

PlatformInfo classify_platform(std::string_view platform) {
  std::string lowered = ascii_lower(platform);
  std::string_view p = lowered;
  if (p == "any") {
    PlatformInfo any;
    any.family = PlatformFamily::Any;
    return any;
  }
  if (p == "win32" || p.starts_with("win_")) return classify_windows(p);
  if (p.starts_with("linux_")) return classify_linux(p);
  if (p.starts_with("manylinux")) return classify_legacy_manylinux(p);
  if (p.starts_with("musllinux_")) return classify_glibc_like(p, PlatformFamily::Musllinux, "musllinux_");
  if (p.starts_with("macosx_")) return classify_macos(p);
  if (p.starts_with("android_")) return classify_android(p);
  if (p.starts_with("ios_")) return classify_ios(p);
  if (p.starts_with("pyemscripten_")) return classify_emscripten(p);
  return PlatformInfo{};  // Unknown: legal, but nothing we can check
}

Findings check_platforms(const std::vector<std::string>& platforms, std::string_view member) {
  Findings out;
  std::vector<PlatformInfo> infos;
  for (const auto& p : platforms) {
    if (p.empty()) continue;  // F6 reports empty members
    infos.push_back(classify_platform(p));
    const PlatformInfo& info = infos.back();
    if (!info.problem.empty())
      add(out, "F8", info.strict_problem ? Severity::Strict : Severity::Warning, std::string(member), info.problem,
          "a well-formed " + std::string(to_string(info.family)) + " platform tag");
    if (info.family == PlatformFamily::Linux)
      add(out, "F8", Severity::Warning, std::string(member),
          ascii_lower(p) + ": not a portable tag (PyPI rejects linux_* except armv6l/armv7l)",
          "manylinux_X_Y_" + info.arch + " after checking the binaries with auditwheel");
  }
  check_mixtures(infos, member, out);
  return out;
}

}  // namespace sb::wheel
