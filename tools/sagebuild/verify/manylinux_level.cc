#include "sagebuild/verify/manylinux_level.h"

#include <algorithm>

#include "sagebuild/wheel/platform.h"

namespace sb::verify {

namespace {

std::string joined(const std::vector<std::string>& items, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) out += (i ? "; " : "") + items[i];
  if (items.size() > max) out += "; and " + std::to_string(items.size() - max) + " more";
  return out;
}

// Why the binaries do not fit `level`: "member: need; need", binary by binary.
std::vector<std::string> reasons(const std::vector<BinaryFacts>& binaries, const ManylinuxPolicy& level,
                                 const std::string& arch, const LevelContext& ctx) {
  std::vector<std::string> out;
  for (const auto& b : binaries) {
    auto missing = unmet(b, level, arch, ctx);
    if (!missing.empty()) out.push_back(b.member + ": " + joined(missing, 3));
  }
  return out;
}

void check_manylinux_claim(const std::vector<BinaryFacts>& binaries, const std::string& tag,
                           const ManylinuxPolicy& claimed, const std::string& arch, const LevelContext& ctx,
                           Findings& out) {
  const ManylinuxPolicy* fit = oldest_level(binaries, arch, ctx);
  if (fit && !claimed.older_than(*fit)) return;
  std::string found = "platform tag " + tag + " claims " + claimed.name + ", but " +
                      (fit ? "the binaries need " + fit->name : std::string("no manylinux level fits the binaries"));
  add(out, "P2", Severity::Strict, "", found,
      fit ? "the tag " + fit->name + "_" + arch + " (or build against an older glibc and libstdc++)"
          : level_advice(binaries, arch, ctx));
}

}  // namespace

std::vector<std::string> unmet(const BinaryFacts& b, const ManylinuxPolicy& level, const std::string& arch,
                               const LevelContext& ctx) {
  Findings found;
  check_symbol_versions(b, level, arch, found);
  check_needed_libraries(b, &level, ctx.allowed_libraries, ctx.members, found);
  std::vector<std::string> out;
  for (const auto& f : found) out.push_back(f.message);
  return out;
}

const ManylinuxPolicy* oldest_level(const std::vector<BinaryFacts>& binaries, const std::string& arch,
                                    const LevelContext& ctx) {
  for (const ManylinuxPolicy* level : ctx.policy.levels(arch)) {
    bool fits = std::all_of(binaries.begin(), binaries.end(),
                            [&](const BinaryFacts& b) { return unmet(b, *level, arch, ctx).empty(); });
    if (fits) return level;
  }
  return nullptr;
}

std::string level_advice(const std::vector<BinaryFacts>& binaries, const std::string& arch, const LevelContext& ctx) {
  auto levels = ctx.policy.levels(arch);
  const ManylinuxPolicy* fit = oldest_level(binaries, arch, ctx);
  if (!fit) return "no manylinux level fits: " + joined(reasons(binaries, *levels.back(), arch, ctx), 2);
  std::string advice = fit->name + "_" + arch + ", the oldest level the binaries satisfy";
  auto it = std::find(levels.begin(), levels.end(), fit);
  if (it != levels.begin())
    advice += " (" + (*std::prev(it))->name + " is ruled out by " +
              joined(reasons(binaries, **std::prev(it), arch, ctx), 2) + ")";
  return advice;
}

void check_platform_levels(const std::vector<BinaryFacts>& binaries, const std::vector<std::string>& platform_tags,
                           const LevelContext& ctx, Findings& out) {
  for (const auto& tag : platform_tags) {
    auto info = wheel::classify_platform(tag);
    bool manylinux = info.family == wheel::PlatformFamily::Manylinux;
    if (!manylinux && info.family != wheel::PlatformFamily::Linux) continue;
    std::vector<BinaryFacts> mine;  // the binaries this tag speaks for (P1 judges the others)
    for (const auto& b : binaries)
      if (b.machine == info.arch) mine.push_back(b);
    if (mine.empty()) continue;
    if (ctx.policy.levels(info.arch).empty()) {
      if (manylinux)
        add(out, "P2", Severity::Warning, "", "manylinux claim of " + tag + " not checked",
            "an architecture the built-in policy has data for (" +
                joined({ctx.policy.archs().begin(), ctx.policy.archs().end()}, 8) + ")");
      continue;
    }
    if (!manylinux) {
      add(out, "P2", Severity::Warning, "",
          "platform tag " + tag + " claims no manylinux level, and PyPI refuses linux_* tags",
          level_advice(mine, info.arch, ctx));
      continue;
    }
    std::string arch;
    if (const ManylinuxPolicy* claimed = ctx.policy.for_platform(tag, &arch))
      check_manylinux_claim(mine, tag, *claimed, arch, ctx, out);
  }
}

}  // namespace sb::verify
