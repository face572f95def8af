// Our torch/CUDA encodings (build_tag.h): the documented examples, exhaustive
// round trips over every encodable torch and CUDA version in range, pip sort
// order, and rejection of ambiguous or non-canonical spellings.
#include <catch2/catch.hpp>

#include <vector>

#include "sagebuild/wheel/build_tag.h"
#include "sagebuild/wheel/filename.h"

using namespace sb::wheel;

namespace {

Version v(std::string_view text) {
  auto parsed = parse_version(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

Version rel(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  Version x;
  x.release = {a, b, c};
  return x;
}

std::string tag(std::string_view torch, std::string_view cuda) {
  std::string why;
  auto t = encode_build_tag(v(torch), v(cuda), &why);
  INFO(torch << " / " << cuda << ": " << why);
  REQUIRE(t.has_value());
  return *t;
}

}  // namespace

TEST_CASE("build tag: documented examples") {
  CHECK(tag("2.8.0", "12.9") == "280.129");
  CHECK(tag("2.8", "12.8") == "280.128");
  CHECK(tag("2.9.1", "13.0") == "291.130");
  CHECK(tag("2.10.0", "12.9") == "21000.129");
  CHECK(tag("2.11.0", "13") == "21100.130");
  CHECK(tag("2.11.1", "12.6") == "21101.126");
  CHECK(tag("3.0.0", "13.0") == "30000.130");
  CHECK(tag("2.10.12", "12.10") == "21012.1210");
  auto info = decode_build_tag("280.129");
  REQUIRE(info);
  CHECK(info->torch.str() == "2.8.0");
  CHECK(info->cuda.str() == "12.9");
  info = decode_build_tag("21100.130");
  REQUIRE(info);
  CHECK(info->torch.str() == "2.11.0");
  CHECK(info->cuda.str() == "13.0");
}

TEST_CASE("build tag: exhaustive round trip and one code per version") {
  std::vector<std::string> codes;
  for (std::uint64_t major = 0; major <= 12; ++major)
    for (std::uint64_t minor = 0; minor <= 99; ++minor)
      for (std::uint64_t patch = 0; patch <= 99; ++patch) {
        Version torch = rel(major, minor, patch);
        bool legacy = torch < rel(2, 10, 0);
        bool encodable = !legacy || (major <= 9 && minor <= 9 && patch <= 9);
        std::string why;
        auto t = encode_build_tag(torch, v("12.9"), &why);
        INFO(torch.str());
        REQUIRE(t.has_value() == encodable);
        if (!t) {
          CHECK(why.find("above 9") != std::string::npos);
          continue;
        }
        CHECK(t->size() - 4 == (legacy ? 3u : std::to_string(major).size() + 4));
        auto back = decode_build_tag(*t, &why);
        REQUIRE(back.has_value());
        CHECK(back->torch == torch);
        CHECK(back->torch.str() == torch.str());
        codes.push_back(*t);
      }
  // pip sorts build tags by int(leading digits): the order of the codes must
  // follow the torch order, and no two versions may share a code.
  for (std::size_t i = 1; i < codes.size(); ++i) {
    INFO(codes[i - 1] << " < " << codes[i]);
    CHECK((compare_build_tags(codes[i - 1], codes[i]) < 0));
  }
  for (std::uint64_t major = 10; major <= 99; ++major)
    for (std::uint64_t minor = 0; minor <= 99; ++minor) {
      Version cuda;
      cuda.release = {major, minor};
      auto code = encode_cuda_code(cuda);
      REQUIRE(code);
      CHECK(code->size() == (minor <= 9 ? 3u : 4u));
      CHECK(encode_cuda_tag(cuda) == "cu" + *code);
      auto back = decode_cuda_code(*code);
      REQUIRE(back);
      CHECK(back->str() == cuda.str());
    }
}

TEST_CASE("build tag: every 3- and 4-digit code decodes to at most one version") {
  // Brute force: decoding any string of digits either fails or re-encodes to itself.
  for (int n = 0; n < 100000; ++n) {
    for (int width : {3, 4, 5}) {
      std::string s = std::to_string(n);
      if (static_cast<int>(s.size()) > width) continue;
      s = std::string(static_cast<std::size_t>(width) - s.size(), '0') + s;
      if (auto t = decode_build_tag(s + ".129")) {
        INFO(s);
        CHECK(encode_build_tag(t->torch, t->cuda) == s + ".129");
      }
    }
  }
}

TEST_CASE("build tag: ambiguous, non-canonical and malformed tags are rejected") {
  for (const char* bad :
       {"2110.129",   // 2.1.10 or 21.1.0: the legacy-era ambiguity
        "20800.129",  // 2.8.0 is written 280
        "300.130",    // 3.0.0 is written 30000
        "0280.129", "28.129", "280", "280.129.1", "280.", ".129", "280.12",
        "280.1205",  // 12.5 is written 125
        "280.0129", "280.99", "280.12a", "2a0.129", "21000.1209", "280-129", "2100.129", "12345678901.129"}) {
    std::string why;
    INFO(bad);
    CHECK_FALSE(decode_build_tag(bad, &why).has_value());
    CHECK((why.find("expected") != std::string::npos || why.find("written") != std::string::npos));
  }
}

TEST_CASE("build tag: only plain releases in range can be encoded") {
  for (auto [torch, cuda] : std::vector<std::pair<const char*, const char*>>{{"2.8.0+cu128", "12.8"},
                                                                             {"2.9.0rc1", "12.8"},
                                                                             {"2.10.0.dev20250901", "12.9"},
                                                                             {"2.8.0.post1", "12.8"},
                                                                             {"1!2.8.0", "12.8"},
                                                                             {"2.8.0.1", "12.8"},
                                                                             {"1.13.1", "11.7"},
                                                                             {"2.9.10", "12.8"},
                                                                             {"2.100.0", "12.8"},
                                                                             {"2.8.0", "9.2"},
                                                                             {"2.8.0", "12.8.1"},
                                                                             {"2.8.0", "100.0"},
                                                                             {"2.8.0", "12.100"}}) {
    std::string why;
    INFO(torch << " / " << cuda);
    CHECK_FALSE(encode_build_tag(v(torch), v(cuda), &why).has_value());
    CHECK_FALSE(why.empty());
  }
}

TEST_CASE("build tag: the scheme's tags are valid F5 build tags") {
  auto parsed =
      parse_wheel_filename("sageattention-2.2.0-" + tag("2.11.0", "13.0") + "-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK(parsed.ok());
  REQUIRE(parsed.filename);
  CHECK(parsed.filename->build_tag == std::optional<std::string>("21100.130"));
}

TEST_CASE("local version: encode, decode, normalized spellings") {
  std::string why;
  auto local = encode_local_version(v("12.8"), v("2.9.0"), &why);
  REQUIRE(local);
  CHECK(*local == "cu128torch2.9.0");
  CHECK(encode_local_version(v("13.0"), v("2.10")) == std::optional<std::string>("cu130torch2.10.0"));
  // It is a valid, normalized PEP 440 local label.
  CHECK(is_normalized("1.0.0+" + *local));
  for (const char* spelling : {"cu128torch2.9.0", "+cu128torch2.9.0", "CU128TORCH2.9.0", "cu128torch2_9-0"}) {
    INFO(spelling);
    auto info = decode_local_version(spelling, &why);
    REQUIRE(info);
    CHECK(info->cuda.str() == "12.8");
    CHECK(info->torch.str() == "2.9.0");
  }
  auto wide = decode_local_version("cu1210torch2.11.0");
  REQUIRE(wide);
  CHECK(wide->cuda.str() == "12.10");
  CHECK(wide->torch.str() == "2.11.0");
  for (const char* bad :
       {"cu128", "torch2.9.0", "cu128.torch2.9.0", "cu130.torch2.13.0.sm90", "cu12torch2.9.0", "cu0128torch2.9.0",
        "cu1208torch2.9.0", "cu128torch2.9", "cu128torch2.9.0.1", "cu128torch2.9.0rc1", "", "+"}) {
    INFO(bad);
    CHECK_FALSE(decode_local_version(bad, &why).has_value());
    CHECK((why.find("expected") != std::string::npos || why.find("canonical") != std::string::npos));
  }
}
