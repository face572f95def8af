#include "sagebuild/index/landing.h"

#include "sagebuild/index/html.h"

namespace sb::index {

std::string variant_index_url(std::string_view base_url, std::string_view variant) {
  std::string base(base_url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/" + std::string(variant) + "/simple/";
}

std::string pip_command(std::string_view project, std::string_view base_url,
                        std::string_view variant) {
  return "pip install " + std::string(project) + " --extra-index-url " +
         variant_index_url(base_url, variant);
}

namespace {

std::string variant_row(const VariantGroup& g, std::string_view base_url) {
  std::string commands;
  for (const auto& project : projects_of(g)) {
    commands += "<code>" + html_escape(pip_command(project, base_url, g.name)) + "</code><br>";
  }
  return "<tr><td><a href=\"" + html_escape(g.name) + "/simple/\">" + html_escape(g.name) +
         "</a></td><td>" + html_escape(g.torch_minor) + "</td><td>" + html_escape(g.cuda_version) +
         "</td><td>" + std::to_string(g.wheels.size()) + "</td><td>" + commands + "</td></tr>\n";
}

}  // namespace

std::string render_landing_page(const std::vector<VariantGroup>& groups,
                                std::string_view base_url) {
  std::string page =
      "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>SageAttention wheels</title>\n</head>\n<body>\n"
      "<h1>SageAttention wheels</h1>\n"
      "<p>Pick the row matching the torch and CUDA you have installed "
      "(<code>python -c \"import torch; print(torch.__version__, torch.version.cuda)\"</code>) "
      "and run its command. Each wheel requires exactly that torch release, so pip will not "
      "replace your torch with another one silently.</p>\n"
      "<table>\n<tr><th>Variant</th><th>torch</th><th>CUDA</th><th>Wheels</th>"
      "<th>Install</th></tr>\n";
  for (const auto& g : groups) page += variant_row(g, base_url);
  page += "</table>\n<p><a href=\"manifest.json\">manifest.json</a> lists every wheel, its "
          "SHA-256 and its build information.</p>\n</body>\n</html>\n";
  return page;
}

}  // namespace sb::index
