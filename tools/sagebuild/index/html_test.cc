#include <catch2/catch.hpp>

#include "sagebuild/index/html.h"
#include "sagebuild/index/test_wheels.h"

using namespace sb::index;
using testing::wheel;

TEST_CASE("html_escape escapes markup and both quote kinds") {
  CHECK(html_escape(">=3.10,<4") == "&gt;=3.10,&lt;4");
  CHECK(html_escape("a&b \"c\" 'd'") == "a&amp;b &quot;c&quot; &#39;d&#39;");
  CHECK(html_escape("plain") == "plain");
}

TEST_CASE("file names are percent-encoded in links ('+' of local versions too)") {
  CHECK(url_escape_path_segment("sageattn3-1.0.0+cu128torch2.9.0-cp312-cp312-linux_x86_64.whl") ==
        "sageattn3-1.0.0%2Bcu128torch2.9.0-cp312-cp312-linux_x86_64.whl");
  CHECK(url_escape_path_segment("a b#c") == "a%20b%23c");
}

TEST_CASE("PEP 503 project page: one anchor per wheel with hash and requires-python") {
  auto w = wheel("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9");
  w.requires_python = ">=3.10";
  auto plain = wheel("sageattention-2.2.0-280.129-cp39-abi3-win_amd64.whl", "torch2.8-cu129", "2.8.0", "12.9");
  plain.requires_python.clear();
  std::string page = render_project_page_html("sageattention", {w, plain}, "../../../wheels/");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("<meta name=\"pypi:repository-version\" content=\"1.1\">") != std::string::npos);
  CHECK(page.find("<title>Links for sageattention</title>") != std::string::npos);
  CHECK(page.find("<a href=\"../../../wheels/sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl"
                  "#sha256=" +
                  std::string(64, 'a') +
                  "\" data-requires-python=\"&gt;=3.10\">"
                  "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl</a>") != std::string::npos);
  // No Requires-Python: no attribute (an empty one would be a bad specifier).
  CHECK(page.find("win_amd64.whl#sha256=" + std::string(64, 'a') + "\">") != std::string::npos);
}

TEST_CASE("PEP 503 project list links each project's directory") {
  std::string page = render_project_list_html({"sageattention", "sageattn3"});
  CHECK(page.find("<a href=\"sageattention/\">sageattention</a>") != std::string::npos);
  CHECK(page.find("<a href=\"sageattn3/\">sageattn3</a>") != std::string::npos);
}
