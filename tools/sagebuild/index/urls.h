// The URLs a site links to and prints in its copy-paste commands: --base-url,
// --wheels-url and the wheel URLs of a --previous manifest.  They land in
// href attributes and, unquoted, in shell commands (landing.h), so only plain
// URLs pass: a scheme that can run script (javascript:, data:) or a character
// a shell or an f-string would read ('"`$;&|<>(){}!\ and white space) is
// refused, whatever an HTML escape would make of it.
#pragma once

#include <string>
#include <string_view>

namespace sb::index {

enum class UrlForm {
  absolute,             // https://, http:// or file://
  absolute_or_relative  // also a relative path without a scheme ("../wheels/")
};

// Why `url` is not such a URL ("...; expected ..."), empty when it is.
std::string url_problem(std::string_view url, UrlForm form);

// url_problem() for a command-line option: throws UsageError naming it.
void check_url_option(const std::string& option, std::string_view url, UrlForm form);

// A name that becomes one directory of the site (a project, a variant):
// throws UsageError naming `what` unless it is [a-z0-9._-]+ and not "." or "..".
void check_path_component(std::string_view name, const std::string& what);

}  // namespace sb::index
