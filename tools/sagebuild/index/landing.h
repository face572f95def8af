// SITE/index.html: the page users land on. It tells them which index URL
// serves their torch and CUDA (a one-line Python snippet prints it), and
// lists every variant with its pip and uv commands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/index/variant.h"

namespace sb::index {

// "<base>/<variant>/simple/" with exactly one '/' between the parts.
std::string variant_index_url(std::string_view base_url, std::string_view variant);

// "pip install <project> --extra-index-url <variant index url>": pip merges
// the indexes (torch and the other dependencies come from PyPI).
std::string pip_command(std::string_view project, std::string_view base_url, std::string_view variant);

// "uv pip install <project> --extra-index-url <variant index url>": uv takes
// a package from the first index that has it, and an extra index comes first.
std::string uv_command(std::string_view project, std::string_view base_url, std::string_view variant);

// A `python -c` command that prints the variant index URL for the torch the
// interpreter imports, by the rule of variant_name(): torch major.minor and
// the CUDA code (12.9 -> cu129, 12.10 -> cu1210); for a CPU-only torch it says
// so instead.
std::string index_url_command(std::string_view base_url);

std::string render_landing_page(const std::vector<VariantGroup>& groups, std::string_view base_url);

}  // namespace sb::index
