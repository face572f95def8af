// Our own rules (B1-B5) for SageAttention wheels carrying
// `<package>/build_info.json`: the file name (build tag or local version),
// the tags, METADATA's torch pin and the build-info must tell one story.
// The binary half (B6-B9) is in binary_rules.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sagebuild/common/finding.h"
#include "sagebuild/distinfo/build_info.h"
#include "sagebuild/wheel/filename.h"
#include "sagebuild/wheel/torch_requirement.h"

namespace sb::verify {

// B1: parses and validates the JSON; nullopt (with a finding) when invalid.
std::optional<distinfo::BuildInfo> load_build_info(std::string_view text, const std::string& member, Findings& out);

// B2: name, version and the torch/CUDA encoded in the build tag or local version.
void check_build_info_filename(const distinfo::BuildInfo& b, const wheel::WheelFilename& fn, const std::string& member,
                               Findings& out);
// B3: the file name's and WHEEL's tags are the build-info's one tag.
void check_build_info_tags(const distinfo::BuildInfo& b, const wheel::WheelFilename& fn,
                           const std::vector<std::string>& wheel_tag_lines, const std::string& member, Findings& out);
// B4: METADATA has exactly one torch requirement, without a marker, that
// fits the extension (wheel/torch_requirement.h): it admits
// build_info.torch.version; for a stable-ABI extension also newer torch
// releases (an exact pin is too strict), for a classic one no other minor
// release.  `binding` is what the binaries show (nullopt: not known).
void check_torch_pin(const distinfo::BuildInfo& b, const std::vector<std::string>& requires_dist,
                     std::optional<wheel::TorchBinding> binding, const std::string& member, Findings& out);
// B5: abi_mode, pythons and the interpreter/ABI tags agree.
void check_python_coverage(const distinfo::BuildInfo& b, const std::string& member, Findings& out);

}  // namespace sb::verify
