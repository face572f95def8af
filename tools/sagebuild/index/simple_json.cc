#include "sagebuild/index/simple_json.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sagebuild/index/html.h"
#include "sagebuild/wheel/pep440.h"

namespace sb::index {

namespace {

nlohmann::json meta() { return {{"api-version", kSimpleApiVersion}}; }

// Distinct versions, in PEP 440 order.
std::vector<std::string> versions_of(const std::vector<IndexedWheel>& wheels) {
  std::vector<wheel::Version> parsed;
  for (const auto& w : wheels) {
    if (auto v = wheel::parse_version(w.version)) parsed.push_back(*v);
  }
  std::sort(parsed.begin(), parsed.end());
  parsed.erase(std::unique(parsed.begin(), parsed.end()), parsed.end());
  std::vector<std::string> out;
  for (const auto& v : parsed) out.push_back(v.str());
  return out;
}

}  // namespace

std::string render_project_list_json(const std::vector<std::string>& projects) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : projects) list.push_back({{"name", p}});
  return nlohmann::json{{"meta", meta()}, {"projects", list}}.dump(2) + "\n";
}

std::string render_project_page_json(std::string_view project, const std::vector<IndexedWheel>& wheels,
                                     std::string_view wheels_href) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& w : wheels) {
    std::string url = wheel_url(wheels_href, w);
    nlohmann::json f{{"filename", w.filename}, {"url", url}, {"hashes", {{"sha256", w.sha256}}}, {"size", w.size}};
    if (!w.requires_python.empty()) f["requires-python"] = w.requires_python;
    files.push_back(std::move(f));
  }
  nlohmann::json page{
      {"meta", meta()}, {"name", std::string(project)}, {"versions", versions_of(wheels)}, {"files", files}};
  return page.dump(2) + "\n";
}

}  // namespace sb::index
