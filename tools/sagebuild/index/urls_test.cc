#include <catch2/catch.hpp>

#include "sagebuild/common/error.h"
#include "sagebuild/index/urls.h"

using namespace sb::index;

TEST_CASE("site URLs: http(s) and file URLs pass") {
  for (const char* url : {"https://o.github.io/r", "https://github.com/o/r/releases/download/v2.2.0/",
                          "http://localhost:8000/sage/", "file:///tmp/site", "https://h.example/a%20b/~u/x-y_z.1"})
    CHECK(url_problem(url, UrlForm::absolute).empty());
  CHECK(url_problem("../wheels/", UrlForm::absolute_or_relative).empty());
}

TEST_CASE("site URLs: script schemes, quotes and shell text are refused, saying why") {
  CHECK_THAT(url_problem("javascript:alert(1)", UrlForm::absolute), Catch::Contains("'('"));
  CHECK_THAT(url_problem("javascript:alert", UrlForm::absolute_or_relative),
             Catch::StartsWith("not an http(s) or file URL"));
  CHECK_THAT(url_problem("data:text/html,x", UrlForm::absolute_or_relative), Catch::StartsWith("not an http(s)"));
  CHECK_THAT(url_problem("https://x/\"onclick=\"a", UrlForm::absolute), Catch::Contains("'\"'"));
  CHECK_THAT(url_problem("https://x/'; rm -rf ~; '", UrlForm::absolute), Catch::Contains("'''"));
  CHECK_THAT(url_problem("https://x/$(id)", UrlForm::absolute), Catch::Contains("'$'"));
  CHECK_THAT(url_problem("https://x/{t[0]}", UrlForm::absolute), Catch::Contains("'{'"));
  CHECK_THAT(url_problem("https://x/a b", UrlForm::absolute), Catch::Contains("' '"));
  CHECK_THAT(url_problem("https://x/\n", UrlForm::absolute), Catch::Contains("\\x0a"));
  CHECK_THAT(url_problem("wheels/", UrlForm::absolute), Catch::StartsWith("a relative URL"));
  CHECK_THAT(url_problem("", UrlForm::absolute), Catch::StartsWith("empty"));
  CHECK_THAT(url_problem("https://", UrlForm::absolute), Catch::StartsWith("not an http(s)"));
}

TEST_CASE("check_url_option names the option") {
  try {
    check_url_option("--base-url", "javascript:x", UrlForm::absolute);
    FAIL("accepted javascript:");
  } catch (const sb::UsageError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("--base-url 'javascript:x': not an http(s) or file URL"));
  }
}

TEST_CASE("a site directory is one plain normalized name") {
  CHECK_NOTHROW(check_path_component("sageattention", "project"));
  CHECK_NOTHROW(check_path_component("torch2.11-cu130", "variant"));
  for (const char* bad : {"", ".", "..", "../x", "a/b", "a\\b", "Sage", "a;b", "a b"})
    CHECK_THROWS_AS(check_path_component(bad, "project"), sb::UsageError);
}
