#include <catch2/catch.hpp>

#include "sagebuild/index/landing.h"
#include "sagebuild/index/test_wheels.h"

using namespace sb::index;
using testing::wheel;

TEST_CASE("variant index URLs and pip commands") {
  CHECK(variant_index_url("https://example.org/sage/", "torch2.8-cu129") ==
        "https://example.org/sage/torch2.8-cu129/simple/");
  CHECK(pip_command("sageattention", "https://example.org/sage", "torch2.8-cu129") ==
        "pip install sageattention --extra-index-url https://example.org/sage/torch2.8-cu129/simple/");
}

TEST_CASE("the landing page has one row per variant with its command") {
  auto groups = group_by_variant({
      wheel("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9"),
      wheel("sageattention-2.2.0-290.130-cp39-abi3-linux_x86_64.whl", "torch2.9-cu130", "2.9.0", "13.0"),
  });
  std::string page = render_landing_page(groups, "https://x.io/s");
  CHECK(page.find("<td><a href=\"torch2.8-cu129/simple/\">torch2.8-cu129</a></td><td>2.8</td>"
                  "<td>12.9</td><td>1</td>") != std::string::npos);
  CHECK(page.find("<code>pip install sageattention --extra-index-url "
                  "https://x.io/s/torch2.9-cu130/simple/</code>") != std::string::npos);
  CHECK(page.find("manifest.json") != std::string::npos);
}
