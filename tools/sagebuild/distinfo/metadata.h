// .dist-info/METADATA (core metadata spec): checks M1-M9 of docs/verify-rules.md and
// the writer for our own METADATA 2.4.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sagebuild/common/finding.h"
#include "sagebuild/wheel/pep440.h"

namespace sb::distinfo {

// What METADATA is compared against.
struct MetadataExpectations {
  std::string filename_project;                    // the file name's name part, as written
  std::optional<wheel::Version> filename_version;  // nullopt when the file name's version is invalid
  std::string dist_info;                           // "<name>-<ver>.dist-info" (License-File lookup)
  // Whether the archive has this member (License-File lookup, M7).
  std::function<bool(std::string_view member)> has_member;
};

// Parsed facts the other checks use (B rules: the torch pin).
struct MetadataInfo {
  std::string metadata_version;
  std::string name;
  std::string version;
  std::vector<std::string> requires_dist;
};

Findings check_metadata(std::string_view text, std::string_view member, const MetadataExpectations& expected,
                        MetadataInfo* info = nullptr);

// Metadata-Version values the spec defines, and whether one is legal.
bool is_legal_metadata_version(std::string_view v);
// The Metadata-Version a field was introduced in ("1.0" ... "2.5"); empty when unknown.
std::string_view field_introduced_in(std::string_view field);

// Our METADATA, version 2.4.
struct MetadataSpec {
  std::string name;
  std::string version;
  std::string summary;
  std::string requires_python;                                    // e.g. ">=3.9"
  std::vector<std::string> requires_dist;                         // e.g. "torch==2.11.0"
  std::string license_expression;                                 // SPDX, e.g. "Apache-2.0"
  std::vector<std::string> license_files;                         // paths relative to <dist-info>/licenses/
  std::vector<std::pair<std::string, std::string>> project_urls;  // label, URL
  std::string description;                                        // body; empty for none
  std::string description_content_type;                           // e.g. "text/markdown"
};

std::string write_metadata(const MetadataSpec& spec);

}  // namespace sb::distinfo
