#include "sagebuild/distinfo/wheel_file.h"

#include <algorithm>
#include <charconv>

#include "sagebuild/common/text.h"
#include "sagebuild/distinfo/email_header.h"

namespace sb::distinfo {

namespace {

// "1.0" -> {1, 0}; nullopt unless integer-dotted.
std::optional<std::vector<unsigned long>> parse_dotted(std::string_view s) {
  std::vector<unsigned long> parts;
  for (std::size_t start = 0; start <= s.size();) {
    std::size_t end = s.find('.', start);
    if (end == std::string_view::npos) end = s.size();
    unsigned long v = 0;
    auto [p, ec] = std::from_chars(s.data() + start, s.data() + end, v);
    if (end == start || ec != std::errc() || p != s.data() + end) return std::nullopt;
    parts.push_back(v);
    start = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return "[" + s + "]";
}

void check_version(const EmailHeader& h, const std::string& m, Findings& out, WheelFileInfo& info) {
  std::size_t n = h.count("Wheel-Version");
  if (n != 1) {
    add(out, "W2", Severity::Error, m, "Wheel-Version appears " + std::to_string(n) + " times", "exactly once");
    if (n == 0) return;
  }
  info.wheel_version = h.first("Wheel-Version")->value;
  auto v = parse_dotted(info.wheel_version);
  if (!v) {
    add(out, "W2", Severity::Error, m, "Wheel-Version '" + clip(info.wheel_version) + "' is not integer-dotted", "1.0");
  } else if ((*v)[0] > 1) {
    add(out, "W2", Severity::Error, m, "Wheel-Version " + clip(info.wheel_version) + " has a major version above 1",
        "1.x (installers must refuse a newer major)");
  } else if ((*v)[0] == 0) {
    add(out, "W2", Severity::Strict, m,
        "Wheel-Version " + clip(info.wheel_version) + " is pre-1.0 (installer refuses it)", "1.0");
  } else if (v->size() > 1 && (*v)[1] > 0) {
    add(out, "W2", Severity::Warning, m, "Wheel-Version " + clip(info.wheel_version) + " is newer than 1.0", "1.0");
  }
}

void check_purelib(const EmailHeader& h, const std::string& m, Findings& out, WheelFileInfo& info) {
  std::size_t n = h.count("Root-Is-Purelib");
  std::string value = n ? h.first("Root-Is-Purelib")->value : "";
  if (n == 1 && (value == "true" || value == "false")) {
    info.root_is_purelib = value == "true";
    return;
  }
  add(out, "W4", Severity::Strict, m,
      n == 0  ? std::string("Root-Is-Purelib is missing")
      : n > 1 ? "Root-Is-Purelib appears " + std::to_string(n) + " times"
              : "Root-Is-Purelib is '" + clip(value) + "' (installers treat it as false)",
      "exactly one 'Root-Is-Purelib: true' or 'Root-Is-Purelib: false'");
}

void check_tags(const EmailHeader& h, const std::string& m, const WheelFileExpectations& exp, Findings& out,
                WheelFileInfo& info) {
  info.tags = h.values("Tag");
  std::vector<std::string> have = info.tags, want = exp.tags;
  std::sort(have.begin(), have.end());
  have.erase(std::unique(have.begin(), have.end()), have.end());
  std::sort(want.begin(), want.end());
  if (have != want)
    add(out, "W5", Severity::Strict, m, "Tag lines " + clip(join(info.tags)) + " differ from the file name's tags",
        join(want));
}

void check_build(const EmailHeader& h, const std::string& m, const WheelFileExpectations& exp, Findings& out,
                 WheelFileInfo& info) {
  if (const auto* f = h.first("Build")) info.build = f->value;
  if (info.build == exp.build_tag && h.count("Build") <= 1) return;
  std::string found = info.build ? "Build: " + clip(*info.build) : std::string("no Build line");
  std::string want =
      exp.build_tag ? "Build: " + *exp.build_tag : std::string("no Build line (the file name has no build tag)");
  add(out, "W6", Severity::Strict, m, found + " disagrees with the file name", want);
}

}  // namespace

Findings check_wheel_file(std::string_view text, std::string_view member, const WheelFileExpectations& expected,
                          WheelFileInfo* info_out) {
  Findings out;
  std::string m(member);
  WheelFileInfo info;
  EmailHeader h = parse_email_header(text);
  for (const auto& p : h.problems)
    add(out, "W1", Severity::Error, m, m + ":" + std::to_string(p.line) + ": " + p.message,
        "UTF-8 'Name: value' lines");
  if (h.problems_dropped || h.fields_dropped)
    add(out, "W1", Severity::Error, m,
        std::to_string(h.problems_dropped) + " more malformed lines and " + std::to_string(h.fields_dropped) +
            " fields past the first " + std::to_string(EmailHeader::kMaxFields) + " were not checked",
        "a WHEEL file of a few lines");
  check_version(h, m, out, info);
  if (!h.first("Generator")) add(out, "W3", Severity::Warning, m, "no Generator line", "Generator: <tool> <version>");
  check_purelib(h, m, out, info);
  check_tags(h, m, expected, out, info);
  check_build(h, m, expected, out, info);
  if (info_out) *info_out = std::move(info);
  return out;
}

std::string write_wheel_file(const WheelFileSpec& spec) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"Wheel-Version", "1.0"},
      {"Generator", spec.generator},
      {"Root-Is-Purelib", spec.root_is_purelib ? "true" : "false"},
  };
  for (const auto& t : spec.tags) fields.emplace_back("Tag", t);
  if (spec.build_tag) fields.emplace_back("Build", *spec.build_tag);
  return write_email_header(fields);
}

}  // namespace sb::distinfo
