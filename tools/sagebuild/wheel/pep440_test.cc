// PEP 440 versions against the examples of reference/spec-version-specifiers.rst.
#include <catch2/catch.hpp>

#include "sagebuild/wheel/pep440.h"

using namespace sb::wheel;

namespace {

Version v(std::string_view text) {
  std::string why;
  auto parsed = parse_version(text, &why);
  INFO("parsing '" << text << "': " << why);
  REQUIRE(parsed.has_value());
  return *parsed;
}

}  // namespace

TEST_CASE("pep440: every normalization example of the spec") {
  // (spelling, normalized form), section "Normalization".
  const std::pair<const char*, const char*> table[] = {
      {"1.1RC1", "1.1rc1"},
      {"00", "0"},
      {"09000", "9000"},
      {"1.0+foo0100", "1.0+foo0100"},
      {"1.1.a1", "1.1a1"},
      {"1.1-a1", "1.1a1"},
      {"1.0a.1", "1.0a1"},
      {"1.1alpha1", "1.1a1"},
      {"1.1beta2", "1.1b2"},
      {"1.1c3", "1.1rc3"},
      {"1.1pre4", "1.1rc4"},
      {"1.1preview5", "1.1rc5"},
      {"1.2a", "1.2a0"},
      {"1.2-post2", "1.2.post2"},
      {"1.2post2", "1.2.post2"},
      {"1.2.post-2", "1.2.post2"},
      {"1.0-r4", "1.0.post4"},
      {"1.0rev4", "1.0.post4"},
      {"1.2.post", "1.2.post0"},
      {"1.0-1", "1.0.post1"},
      {"1.2-dev2", "1.2.dev2"},
      {"1.2dev2", "1.2.dev2"},
      {"1.2.dev", "1.2.dev0"},
      {"1.0+ubuntu-1", "1.0+ubuntu.1"},
      {"1.0+Ubuntu_1", "1.0+ubuntu.1"},
      {"v1.0", "1.0"},
      {"V1.0", "1.0"},
      {"1.0\n", "1.0"},
      {" \t1.0\r\f\v", "1.0"},
      {"1!2.0", "1!2.0"},
      {"0!1.0", "1.0"},
      {"1.0+abc.007", "1.0+abc.7"},
      {"1.0a1-1", "1.0a1.post1"},
      {"1.0.POST1.DEV2", "1.0.post1.dev2"},
      {"2.2.0+CU128", "2.2.0+cu128"},
      {"2.2.0+cu128_torch2.8.0", "2.2.0+cu128.torch2.8.0"},
  };
  for (auto [spelling, normal] : table) {
    INFO(spelling);
    CHECK(v(spelling).str() == normal);
    CHECK(is_normalized(normal));
    CHECK(is_normalized(spelling) == (std::string(spelling) == normal));
  }
}

TEST_CASE("pep440: invalid spellings are rejected with a reason") {
  for (const char* bad : {"",
                          "1.0-",
                          "1.x",
                          "2010i",
                          "0.1_1",
                          "1.16.0_build1",
                          "0_2_0",
                          "0.0.4test1",
                          "_invalid_",
                          "1.0+",
                          "1.0+a..b",
                          "1.0+a_",
                          "vv1.0",
                          "1.0 a1",
                          "1!",
                          "!1.0",
                          "1..0",
                          "1.0.",
                          ".1",
                          "1.0+ü",
                          "1.0a1a2",
                          "1.0.post1.post2",
                          "1.0.dev1.post1"}) {
    std::string why;
    INFO("'" << bad << "'");
    CHECK_FALSE(parse_version(bad, &why).has_value());
    CHECK(why.find("expected") != std::string::npos);
  }
}

TEST_CASE("pep440: numbers beyond uint64 are an explicit error, not a wrap") {
  std::string why;
  CHECK(v("18446744073709551615").str() == "18446744073709551615");
  CHECK_FALSE(parse_version("18446744073709551616", &why));
  CHECK(why.find("exceeds") != std::string::npos);
  CHECK_FALSE(parse_version("1.0.post99999999999999999999"));
  // Local labels keep their digits as text: no limit there.
  auto big = v("1.0+99999999999999999999999");
  CHECK(big.str() == "1.0+99999999999999999999999");
  CHECK(v("1.0+99999999999999999999998") < big);
  CHECK(v("1.0+100000000000000000000000") > big);
}

TEST_CASE("pep440: the spec's ordering example is strictly increasing") {
  const char* chain[] = {"1.dev0",
                         "1.0.dev456",
                         "1.0a1",
                         "1.0a2.dev456",
                         "1.0a12.dev456",
                         "1.0a12",
                         "1.0b1.dev456",
                         "1.0b2",
                         "1.0b2.post345.dev456",
                         "1.0b2.post345",
                         "1.0rc1.dev456",
                         "1.0rc1",
                         "1.0",
                         "1.0+abc.5",
                         "1.0+abc.7",
                         "1.0+5",
                         "1.0.post456.dev34",
                         "1.0.post456",
                         "1.0.15",
                         "1.1.dev1"};
  const std::size_t n = std::size(chain);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      INFO(chain[i] << " vs " << chain[j]);
      CHECK((v(chain[i]) <=> v(chain[j])) == (i <=> j));
    }
}

TEST_CASE("pep440: equality pads the release and ignores spelling") {
  CHECK(v("1.0") == v("1.0.0"));
  CHECK(v("1.0") == v("1.0.0.0.0"));
  CHECK(v("v1.0.0") == v("1"));
  CHECK(v("1.0a") == v("1.0alpha0"));
  CHECK(v("1.0-1") == v("1.0.post1"));
  CHECK(v("1.0") != v("1.0+local"));
  CHECK(v("1!1.0") > v("2.0"));
  CHECK(v("1.0+a") < v("1.0+a.0"));  // longer label with equal prefix sorts later
  CHECK(v("1.0+abc") < v("1.0+abd"));
  CHECK(v("1.0+9") < v("1.0+10"));   // numeric segments compare as numbers
  CHECK(v("1.0+zzz") < v("1.0+0"));  // numeric beats alphanumeric
}

TEST_CASE("pep440: accessors") {
  auto x = v("1!2.3.4rc5.post6.dev7+Local.008");
  CHECK(x.epoch == 1);
  CHECK(x.release == std::vector<std::uint64_t>{2, 3, 4});
  REQUIRE(x.pre);
  CHECK(x.pre->kind == PreKind::Rc);
  CHECK(x.pre->number == 5);
  CHECK(x.post == std::optional<std::uint64_t>(6));
  CHECK(x.dev == std::optional<std::uint64_t>(7));
  CHECK(x.local_str() == "local.8");
  CHECK(x.public_str() == "1!2.3.4rc5.post6.dev7");
  CHECK(x.public_version().str() == "1!2.3.4rc5.post6.dev7");
  CHECK(x.base_version().str() == "1!2.3.4");
  CHECK(x.is_prerelease());
  CHECK(x.is_postrelease());
  CHECK(v("1.0.post1").is_prerelease() == false);
  CHECK(v("1.0.dev1").is_prerelease());
}

TEST_CASE("pep440: error messages point at the offending text") {
  std::string why;
  CHECK_FALSE(parse_version("1.16.0_build1", &why));
  CHECK(why.find("unexpected '_build1'") != std::string::npos);
  CHECK_FALSE(parse_version("1.x", &why));
  CHECK(why.find("unexpected '.x'") != std::string::npos);
  CHECK_FALSE(parse_version("1.0+", &why));
  CHECK(why.find("expected PEP 440") != std::string::npos);
  // A bare label followed by another segment is still fine: 1.0a0.post1.
  CHECK(parse_version("1.0apost1")->str() == "1.0a0.post1");
  CHECK(parse_version("1.0.postdev")->str() == "1.0.post0.dev0");
}
