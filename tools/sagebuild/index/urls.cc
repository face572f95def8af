#include "sagebuild/index/urls.h"

#include "sagebuild/common/error.h"
#include "sagebuild/common/text.h"

namespace sb::index {

namespace {

// RFC 3986's unreserved characters and the delimiters a package URL uses; no
// quote, no shell or f-string metacharacter.
bool plain_url_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-._~:/%@+,=").find(c) != std::string_view::npos;
}

const char* kExpected = "expected an https://, http:// or file:// URL such as https://example.org/sage/";

}  // namespace

std::string url_problem(std::string_view url, UrlForm form) {
  if (url.empty()) return std::string("empty; ") + kExpected;
  for (char c : url)
    if (!plain_url_char(c))
      return "contains '" + printable(std::string(1, c)) +
             "', which a URL on the site must not (it would be read by the shell commands the landing page "
             "prints); " +
             kExpected + ", its special characters percent-encoded";
  bool scheme = false;
  for (const char* s : {"https://", "http://", "file://"})
    if (url.starts_with(s) && url.size() > std::string_view(s).size()) scheme = true;
  if (scheme) return {};
  bool relative = url.find(':') == std::string_view::npos && !url.starts_with("//");
  if (relative && form == UrlForm::absolute_or_relative) return {};
  return std::string(relative ? "a relative URL, where the site needs where it is served; "
                              : "not an http(s) or file URL; ") +
         kExpected;
}

void check_url_option(const std::string& option, std::string_view url, UrlForm form) {
  std::string why = url_problem(url, form);
  if (!why.empty()) throw UsageError(option + " '" + clip(url) + "': " + why);
}

void check_path_component(std::string_view name, const std::string& what) {
  bool ok = !name.empty() && name != "." && name != ".." && name.size() <= 200 &&
            name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._-") == std::string_view::npos;
  if (!ok)
    throw UsageError(what + " '" + clip(name) +
                     "' cannot name a directory of the site; expected a normalized name of lowercase letters, "
                     "digits, '.', '_' and '-'");
}

}  // namespace sb::index
