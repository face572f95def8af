#include "sagebuild/index/landing.h"

#include <algorithm>

#include "sagebuild/index/html.h"
#include "sagebuild/wheel/filename.h"
#include "sagebuild/wheel/platform.h"

namespace sb::index {

namespace {

std::string trimmed(std::string_view base_url) {
  std::string base(base_url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

std::string commands(const VariantGroup& g, std::string_view base_url) {
  std::string out;
  for (const auto& project : projects_of(g)) {
    out += "<code>" + html_escape(pip_command(project, base_url, g.name)) + "</code><br>";
    out += "<code>" + html_escape(uv_command(project, base_url, g.name)) + "</code><br>";
  }
  return out;
}

// What a user calls a wheel's platform tag: "Linux x86_64", "Linux aarch64",
// "Windows x64"; the tag itself for anything else.
std::string platform_label(std::string_view tag) {
  wheel::PlatformInfo p = wheel::classify_platform(tag);
  switch (p.family) {
    case wheel::PlatformFamily::Linux:
    case wheel::PlatformFamily::Manylinux:
      return "Linux " + p.arch;
    case wheel::PlatformFamily::Windows:
      return tag == "win_amd64" ? "Windows x64" : tag == "win_arm64" ? "Windows ARM64" : std::string(tag);
    default:
      return std::string(tag);
  }
}

// The platforms a variant's wheels serve, each once, in the order first seen
// in a sorted list (Linux before Windows).
std::string platforms_of(const VariantGroup& g) {
  std::vector<std::string> labels;
  for (const auto& w : g.wheels) {
    auto parsed = wheel::parse_wheel_filename(w.filename);
    if (!parsed.filename) continue;
    for (const auto& tag : parsed.filename->platform_tags) labels.push_back(platform_label(tag));
  }
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  std::string out;
  for (const auto& l : labels) out += (out.empty() ? "" : ", ") + l;
  return out;
}

std::string variant_row(const VariantGroup& g, std::string_view base_url) {
  return "<tr><td><a href=\"" + html_escape(g.name) + "/simple/\">" + html_escape(g.name) + "</a></td><td>" +
         html_escape(g.torch_minor) + "</td><td>" + html_escape(g.cuda_version) + "</td><td>" +
         html_escape(platforms_of(g)) + "</td><td>" + std::to_string(g.wheels.size()) + "</td><td>" +
         commands(g, base_url) + "</td></tr>\n";
}

}  // namespace

std::string variant_index_url(std::string_view base_url, std::string_view variant) {
  return trimmed(base_url) + "/" + std::string(variant) + "/simple/";
}

std::string pip_command(std::string_view project, std::string_view base_url, std::string_view variant) {
  return "pip install " + std::string(project) + " --extra-index-url " + variant_index_url(base_url, variant);
}

std::string uv_command(std::string_view project, std::string_view base_url, std::string_view variant) {
  return "uv pip install " + std::string(project) + " --extra-index-url " + variant_index_url(base_url, variant);
}

std::string index_url_command(std::string_view base_url) {
  // Single quotes inside, double outside: one line for a POSIX shell and for
  // cmd.exe / PowerShell alike.
  return "python -c \"import torch; t = torch.__version__.split('+')[0].split('.'); "
         "c = (torch.version.cuda or '').split('.'); "
         "print(f'" +
         trimmed(base_url) +
         "/torch{t[0]}.{t[1]}-cu{c[0]}{c[1]}/simple/' if c[0] else "
         "'torch ' + torch.__version__ + ' is a CPU build: install a CUDA build of torch first')\"";
}

std::string render_landing_page(const std::vector<VariantGroup>& groups, std::string_view base_url) {
  std::string example = groups.empty() ? "torch2.11-cu130" : groups.back().name;
  std::string page =
      "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>SageAttention wheels</title>\n</head>\n<body>\n"
      "<h1>SageAttention wheels</h1>\n"
      "<p>Each index below serves the wheels built for one torch release and one CUDA "
      "version. pip cannot see which torch you have installed, so you choose the index: "
      "run this with the Python you will use, and it prints the index URL for its torch "
      "and CUDA:</p>\n"
      "<pre><code>" +
      html_escape(index_url_command(base_url)) +
      "</code></pre>\n"
      "<p>Then install from that index (keep PyPI for the dependencies), with pip or uv:</p>\n"
      "<pre><code>" +
      html_escape(pip_command("sageattention", base_url, example)) + "\n" +
      html_escape(uv_command("sageattention", base_url, example)) +
      "</code></pre>\n"
      "<p>A wheel built against the PyTorch stable ABI (torch 2.10 and later) requires "
      "<code>torch&gt;=2.10,&lt;3</code>, and one for an older torch requires its minor release "
      "(<code>torch==2.8.*</code>), so pip keeps the torch you have. From torch 2.10 on, one "
      "extension serves every torch of a CUDA version: if your torch's index is not listed, the "
      "newest listed index of your CUDA serves it. For an older torch, only its own index "
      "does.</p>\n"
      "<table>\n<tr><th>Variant</th><th>torch</th><th>CUDA</th><th>Platforms</th><th>Wheels</th>"
      "<th>Install</th></tr>\n";
  for (const auto& g : groups) page += variant_row(g, base_url);
  page +=
      "</table>\n<p><a href=\"manifest.json\">manifest.json</a> lists every wheel, its "
      "SHA-256 and its build information.</p>\n</body>\n</html>\n";
  return page;
}

}  // namespace sb::index
