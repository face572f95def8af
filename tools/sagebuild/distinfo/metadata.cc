#include "sagebuild/distinfo/metadata.h"

#include <array>

#include "sagebuild/common/text.h"
#include "sagebuild/distinfo/email_header.h"
#include "sagebuild/wheel/names.h"
#include "sagebuild/wheel/requirement.h"

namespace sb::distinfo {

namespace {

struct FieldInfo {
  std::string_view name;
  std::string_view since;
};

// Every field of the core metadata spec with the version that introduced it.
constexpr std::array<FieldInfo, 30> kFields{{
    {"Metadata-Version", "1.0"},
    {"Name", "1.0"},
    {"Version", "1.0"},
    {"Platform", "1.0"},
    {"Summary", "1.0"},
    {"Description", "1.0"},
    {"Keywords", "1.0"},
    {"Home-page", "1.0"},
    {"Author", "1.0"},
    {"Author-email", "1.0"},
    {"License", "1.0"},
    {"Supported-Platform", "1.1"},
    {"Download-URL", "1.1"},
    {"Classifier", "1.1"},
    {"Requires", "1.1"},
    {"Provides", "1.1"},
    {"Obsoletes", "1.1"},
    {"Maintainer", "1.2"},
    {"Maintainer-email", "1.2"},
    {"Requires-Dist", "1.2"},
    {"Requires-Python", "1.2"},
    {"Requires-External", "1.2"},
    {"Project-URL", "1.2"},
    {"Provides-Dist", "1.2"},
    {"Obsoletes-Dist", "1.2"},
    {"Description-Content-Type", "2.1"},
    {"Provides-Extra", "2.1"},
    {"Dynamic", "2.2"},
    {"License-Expression", "2.4"},
    {"License-File", "2.4"},
}};
constexpr std::array<FieldInfo, 2> kFields25{{{"Import-Name", "2.5"}, {"Import-Namespace", "2.5"}}};

// "2.4" -> 24, for ordering the (single-digit) versions the spec defines.
int version_key(std::string_view v) {
  if (v.size() != 3 || v[1] != '.') return -1;
  return (v[0] - '0') * 10 + (v[2] - '0');
}

struct Ctx {
  const EmailHeader& h;
  const std::string& m;
  const MetadataExpectations& exp;
  Findings& out;
  MetadataInfo& info;
};

void check_metadata_version(Ctx& c) {
  const auto* f = c.h.first("Metadata-Version");
  std::string v = f ? f->value : "";
  c.info.metadata_version = v;
  if (!f) {
    add(c.out, "M2", Severity::Error, c.m, "no Metadata-Version field", "Metadata-Version: 2.4 (1.1 or above)");
  } else if (v == "2.0" || v == "1.3") {
    add(c.out, "M2", Severity::Strict, c.m,
        "Metadata-Version " + v + " was never defined (packaging and PyPI refuse it)",
        "one of 1.0, 1.1, 1.2, 2.1 ... 2.6");
  } else if (!is_legal_metadata_version(v)) {
    bool newer_major = !v.empty() && v[0] >= '3' && v[0] <= '9';
    add(c.out, "M2", newer_major ? Severity::Error : Severity::Strict, c.m,
        "Metadata-Version '" + clip(v) + "' is not a version this verifier knows", "one of 1.0, 1.1, 1.2, 2.1 ... 2.6");
  }
}

void check_name(Ctx& c) {
  const auto* f = c.h.first("Name");
  if (!f) {
    add(c.out, "M3", Severity::Error, c.m, "no Name field", "Name: " + c.exp.filename_project);
    return;
  }
  c.info.name = f->value;
  // packaging refuses a second Name or Version ("unrecognized or malformed
  // field"): which one a tool reads would be a guess.
  if (std::size_t n = c.h.count("Name"); n > 1)
    add(c.out, "M3", Severity::Error, c.m, std::to_string(n) + " Name fields", "exactly one Name field");
  if (!wheel::is_valid_project_name(f->value))
    add(c.out, "M3", Severity::Error, c.m, "Name '" + clip(f->value) + "' is not a valid project name",
        "letters, digits, '.', '_', '-', starting and ending with a letter or digit");
  else if (!c.exp.filename_project.empty() && !wheel::same_project(f->value, c.exp.filename_project))
    add(c.out, "M3", Severity::Error, c.m, "Name '" + clip(f->value) + "' is not the file name's project",
        wheel::canonicalize_name(c.exp.filename_project) + " (after normalization)");
}

void check_version(Ctx& c) {
  const auto* f = c.h.first("Version");
  if (!f) {
    add(c.out, "M4", Severity::Error, c.m, "no Version field", "Version: <the file name's version>");
    return;
  }
  c.info.version = f->value;
  if (std::size_t n = c.h.count("Version"); n > 1)
    add(c.out, "M4", Severity::Error, c.m, std::to_string(n) + " Version fields", "exactly one Version field");
  std::string why;
  auto v = wheel::parse_version(f->value, &why);
  if (!v)
    add(c.out, "M4", Severity::Error, c.m, "Version '" + clip(f->value) + "' is not PEP 440: " + why,
        "a PEP 440 version");
  else if (c.exp.filename_version && !(*v == *c.exp.filename_version))
    add(c.out, "M4", Severity::Error, c.m, "Version " + clip(f->value) + " differs from the file name's version",
        c.exp.filename_version->str());
}

void check_field_versions(Ctx& c) {
  // An undefined Metadata-Version (2.0, 1.3) has no field set to compare with (M2 said so).
  if (!is_legal_metadata_version(c.info.metadata_version)) return;
  int have = version_key(c.info.metadata_version);
  for (const auto& field : c.h.fields) {
    std::string_view since = field_introduced_in(field.name);
    if (since.empty()) {
      add(c.out, "M9", Severity::Strict, c.m,
          c.m + ":" + std::to_string(field.line) + ": unknown field '" + clip(field.name) + "'",
          "a core metadata field");
    } else if (version_key(since) > have) {
      add(c.out, "M5", Severity::Warning, c.m,
          "field " + clip(field.name) + " needs Metadata-Version " + std::string(since) + ", file says " +
              c.info.metadata_version,
          "Metadata-Version " + std::string(since) + " or above");
    }
  }
}

void check_requirements(Ctx& c) {
  for (const auto& f : c.h.fields) {
    std::string why;
    if (iequals(f.name, "Requires-Dist")) {
      c.info.requires_dist.push_back(f.value);
      auto req = wheel::parse_requirement(f.value, &why);
      if (!req)
        add(c.out, "M6", Severity::Error, c.m, "Requires-Dist '" + clip(f.value) + "' is not PEP 508: " + why,
            "name [extras] (specifiers) [; marker]");
      else if (req->url)
        // PyPI refuses an upload that depends on a direct URL: what pip
        // installs must come from an index, not wherever the URL points.
        add(c.out, "M6", Severity::Strict, c.m, "Requires-Dist '" + clip(f.value) + "' is a direct URL dependency",
            "a name with version specifiers (PyPI refuses direct URL dependencies)");
    } else if (iequals(f.name, "Requires-Python") && !wheel::parse_specifier_set(f.value, &why)) {
      add(c.out, "M6", Severity::Strict, c.m, "Requires-Python '" + clip(f.value) + "' is not a specifier set: " + why,
          "e.g. >=3.9");
    } else if (iequals(f.name, "Dynamic")) {
      for (std::string_view bad : {"Name", "Version", "Metadata-Version"})
        if (iequals(f.value, bad))
          add(c.out, "M6", Severity::Strict, c.m, "Dynamic names " + clip(f.value),
              "Dynamic never names " + std::string(bad));
    } else if (iequals(f.name, "Description-Content-Type") && f.value.find('/') == std::string::npos) {
      add(c.out, "M6", Severity::Strict, c.m, "Description-Content-Type '" + clip(f.value) + "' is not a media type",
          "text/plain, text/x-rst or text/markdown");
    }
  }
}

void check_licenses(Ctx& c) {
  if (c.h.count("License") && c.h.count("License-Expression"))
    add(c.out, "M7", Severity::Strict, c.m, "both License and License-Expression are present",
        "License-Expression alone (License is deprecated)");
  if (version_key(c.info.metadata_version) < 24 || !c.exp.has_member) return;
  for (const auto& path : c.h.values("License-File")) {
    std::string member = c.exp.dist_info + "/licenses/" + path;
    if (!c.exp.has_member(member))
      add(c.out, "M7", Severity::Error, c.m, "License-File '" + clip(path) + "' is not in the wheel", member);
  }
}

}  // namespace

bool is_legal_metadata_version(std::string_view v) {
  for (std::string_view ok : {"1.0", "1.1", "1.2", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6"})
    if (v == ok) return true;
  return false;
}

std::string_view field_introduced_in(std::string_view field) {
  for (const auto& f : kFields)
    if (iequals(f.name, field)) return f.since;
  for (const auto& f : kFields25)
    if (iequals(f.name, field)) return f.since;
  return {};
}

Findings check_metadata(std::string_view text, std::string_view member, const MetadataExpectations& expected,
                        MetadataInfo* info_out) {
  Findings out;
  std::string m(member);
  EmailHeader h = parse_email_header(text);
  if (!h.utf8) {
    add(out, "M1", Severity::Error, m, m + ":" + std::to_string(h.problems.front().line) + ": not valid UTF-8",
        "UTF-8 text (pip fails with 'Error decoding metadata')");
    return out;
  }
  for (const auto& p : h.problems)
    add(out, "M9", Severity::Strict, m, m + ":" + std::to_string(p.line) + ": " + p.message, "Name: value");
  if (h.problems_dropped || h.fields_dropped)
    add(out, "M9", Severity::Strict, m,
        std::to_string(h.problems_dropped) + " more malformed lines and " + std::to_string(h.fields_dropped) +
            " fields past the first " + std::to_string(EmailHeader::kMaxFields) + " were not checked",
        "a METADATA file of ordinary size");
  MetadataInfo info;
  Ctx c{h, m, expected, out, info};
  check_metadata_version(c);
  check_name(c);
  check_version(c);
  check_field_versions(c);
  check_requirements(c);
  check_licenses(c);
  if (info_out) *info_out = std::move(info);
  return out;
}

std::string write_metadata(const MetadataSpec& s) {
  std::vector<std::pair<std::string, std::string>> f = {
      {"Metadata-Version", "2.4"}, {"Name", s.name}, {"Version", s.version}};
  if (!s.summary.empty()) f.emplace_back("Summary", s.summary);
  for (const auto& [label, url] : s.project_urls) f.emplace_back("Project-URL", label + ", " + url);
  if (!s.license_expression.empty()) f.emplace_back("License-Expression", s.license_expression);
  for (const auto& lf : s.license_files) f.emplace_back("License-File", lf);
  if (!s.requires_python.empty()) f.emplace_back("Requires-Python", s.requires_python);
  for (const auto& r : s.requires_dist) f.emplace_back("Requires-Dist", r);
  if (!s.description.empty() && !s.description_content_type.empty())
    f.emplace_back("Description-Content-Type", s.description_content_type);
  return write_email_header(f, s.description);
}

}  // namespace sb::distinfo
