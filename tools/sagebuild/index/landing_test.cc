#include <catch2/catch.hpp>

#include "sagebuild/index/html.h"
#include "sagebuild/index/landing.h"
#include "sagebuild/index/test_wheels.h"

using namespace sb::index;
using testing::wheel;

TEST_CASE("variant index URLs, pip and uv commands") {
  CHECK(variant_index_url("https://example.org/sage/", "torch2.8-cu129") ==
        "https://example.org/sage/torch2.8-cu129/simple/");
  CHECK(pip_command("sageattention", "https://example.org/sage", "torch2.8-cu129") ==
        "pip install sageattention --extra-index-url https://example.org/sage/torch2.8-cu129/simple/");
  CHECK(uv_command("sageattention", "https://example.org/sage/", "torch2.8-cu129") ==
        "uv pip install sageattention --extra-index-url https://example.org/sage/torch2.8-cu129/simple/");
}

TEST_CASE("the snippet that prints a user's index URL follows the variant naming rule") {
  // Run with real interpreters in tests/index/test_index.py; here its text.
  std::string cmd = index_url_command("https://x.io/s/");
  CHECK(cmd.rfind("python -c \"import torch; ", 0) == 0);
  CHECK(cmd.find("https://x.io/s/torch{t[0]}.{t[1]}-cu{c[0]}{c[1]}/simple/") != std::string::npos);
  CHECK(cmd.find('"', 11) == cmd.size() - 1);  // one double-quoted argument: no inner double quotes
  // The rule it encodes is variant_name's: major.minor of torch, CUDA MM + m(m).
  CHECK(variant_name("2.11.0", "13.0") == "torch2.11-cu130");
  CHECK(variant_name("2.8.0", "12.10") == "torch2.8-cu1210");
}

TEST_CASE("the landing page: how to find your index, then one row per variant with its commands") {
  auto groups = group_by_variant({
      wheel("sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl", "torch2.8-cu129", "2.8.0", "12.9"),
      wheel("sageattention-2.2.0-290.130-cp39-abi3-linux_x86_64.whl", "torch2.9-cu130", "2.9.0", "13.0"),
      wheel("sageattention-2.2.0-290.130-cp39-abi3-manylinux_2_34_aarch64.whl", "torch2.9-cu130", "2.9.0", "13.0"),
      wheel("sageattention-2.2.0-290.130-cp39-abi3-win_amd64.whl", "torch2.9-cu130", "2.9.0", "13.0"),
  });
  std::string page = render_landing_page(groups, "https://x.io/s");
  CHECK(page.find(html_escape(index_url_command("https://x.io/s"))) != std::string::npos);
  CHECK(page.find("<td><a href=\"torch2.8-cu129/simple/\">torch2.8-cu129</a></td><td>2.8</td>"
                  "<td>12.9</td><td>Linux x86_64</td><td>1</td>") != std::string::npos);
  // Each variant names the platforms its wheels serve, each once.
  CHECK(page.find("<td>13.0</td><td>Linux aarch64, Linux x86_64, Windows x64</td><td>3</td>") != std::string::npos);
  CHECK(page.find("<code>pip install sageattention --extra-index-url "
                  "https://x.io/s/torch2.9-cu130/simple/</code>") != std::string::npos);
  CHECK(page.find("<code>uv pip install sageattention --extra-index-url "
                  "https://x.io/s/torch2.9-cu130/simple/</code>") != std::string::npos);
  CHECK(page.find("manifest.json") != std::string::npos);
}
