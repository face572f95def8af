// SITE/index.html: the page users land on, one row per variant with the
// exact pip command for it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sagebuild/index/variant.h"

namespace sb::index {

// "<base>/<variant>/simple/" with exactly one '/' between the parts.
std::string variant_index_url(std::string_view base_url, std::string_view variant);

// "pip install <project> --extra-index-url <variant index url>"
std::string pip_command(std::string_view project, std::string_view base_url,
                        std::string_view variant);

std::string render_landing_page(const std::vector<VariantGroup>& groups,
                                std::string_view base_url);

}  // namespace sb::index
