#include "sagebuild/index/html.h"

namespace sb::index {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string url_escape_path_segment(std::string_view segment) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : segment) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                c == '.' || c == '~';
    if (keep) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  return out;
}

std::string wheel_url(std::string_view wheels_href, const IndexedWheel& wheel) {
  if (!wheel.url.empty()) return wheel.url;
  return std::string(wheels_href) + url_escape_path_segment(wheel.filename);
}

std::string wheel_href(std::string_view wheels_href, const IndexedWheel& wheel) {
  return wheel_url(wheels_href, wheel) + "#sha256=" + wheel.sha256;
}

namespace {

// PEP 629's version marker; 1.1 matches the JSON form (PEP 700), whose
// additions are JSON-only.
std::string page_head(std::string_view title) {
  return "<!DOCTYPE html>\n<html>\n<head>\n"
         "<meta name=\"pypi:repository-version\" content=\"1.1\">\n"
         "<title>" +
         html_escape(title) +
         "</title>\n</head>\n<body>\n"
         "<h1>" +
         html_escape(title) + "</h1>\n";
}

const char* kPageTail = "</body>\n</html>\n";

}  // namespace

std::string render_project_list_html(const std::vector<std::string>& projects) {
  std::string page = page_head("Simple index");
  for (const auto& p : projects) {
    page += "<a href=\"" + html_escape(url_escape_path_segment(p)) + "/\">" + html_escape(p) + "</a><br>\n";
  }
  return page + kPageTail;
}

std::string render_project_page_html(std::string_view project, const std::vector<IndexedWheel>& wheels,
                                     std::string_view wheels_href) {
  std::string page = page_head("Links for " + std::string(project));
  for (const auto& w : wheels) {
    page += "<a href=\"" + html_escape(wheel_href(wheels_href, w)) + "\"";
    if (!w.requires_python.empty()) page += " data-requires-python=\"" + html_escape(w.requires_python) + "\"";
    page += ">" + html_escape(w.filename) + "</a><br>\n";
  }
  return page + kPageTail;
}

}  // namespace sb::index
