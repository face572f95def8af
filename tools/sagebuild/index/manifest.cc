#include "sagebuild/index/manifest.h"

#include <nlohmann/json.hpp>

#include "sagebuild/index/html.h"

namespace sb::index {

namespace {

nlohmann::json wheel_entry(const IndexedWheel& w, const std::string& wheels_href) {
  // ordered_json would keep insertion order; nlohmann::json sorts keys,
  // which is just as reproducible.
  return {{"filename", w.filename},
          {"url", wheel_url(wheels_href, w)},
          {"project", w.project},
          {"version", w.version},
          {"variant", w.variant},
          {"torch", w.torch_version},
          {"cuda", w.cuda_version},
          {"sha256", w.sha256},
          {"size", w.size},
          {"requires_python", w.requires_python},
          {"build_info", w.build_info}};
}

}  // namespace

std::string render_manifest(const std::vector<VariantGroup>& groups, const std::string& wheels_href) {
  nlohmann::json variants = nlohmann::json::array(), wheels = nlohmann::json::array();
  for (const auto& g : groups) {
    variants.push_back(
        {{"name", g.name}, {"torch", g.torch_minor}, {"cuda", g.cuda_version}, {"index", g.name + "/simple/"}});
    for (const auto& w : g.wheels) wheels.push_back(wheel_entry(w, wheels_href));
  }
  return nlohmann::json{{"variants", variants}, {"wheels", wheels}}.dump(2) + "\n";
}

}  // namespace sb::index
