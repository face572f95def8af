// Every way the matrix file can be wrong gets a message with the exact place
// and what would be valid there.
#include <catch2/catch.hpp>

#include <chrono>
#include <regex>

#include "sagebuild/matrix/test_support.h"

using namespace sb::matrix;
using namespace sb::matrix::testing;

namespace {

// kBase with line `line` (1-based) replaced by `replacement` (may be several lines).
std::string replace_line(int line, const std::string& replacement) {
  std::string text = kBase, out;
  std::size_t start = 0;
  for (int n = 1; start < text.size(); ++n) {
    std::size_t end = text.find('\n', start);
    out += n == line ? replacement + "\n" : text.substr(start, end - start + 1);
    start = end + 1;
  }
  return out;
}

std::string expect(const std::string& file, const std::string& rest) { return file + ":" + rest; }

// `text` with a top-level `upstream:` (one line) before its packages.
std::string with_upstream(std::string text, const std::string& upstream) {
  return text.replace(text.find("packages:\n"), 0, upstream + "\n");
}

const char* kUpstream =
    "upstream: {repository: thu-ml/SageAttention, commit: d1a57a546c3d395b1ffcbeecc66d81db76f3b4b5}";

}  // namespace

TEST_CASE("the base document of these tests is valid") { CHECK(load_error("base.yaml", kBase) == "no error"); }

TEST_CASE("a YAML syntax error is reported at yaml-cpp's mark") {
  std::string file;
  auto message = load_error("syntax.yaml", replace_line(9, "    pythons: [\"3.10\", \"3.12\""), &file);
  // The unclosed flow list is noticed where the next key starts.
  CHECK(message == expect(file, "10:5: error: invalid YAML: end of sequence flow not found"));
}

TEST_CASE("an unknown key lists the allowed keys and the closest one") {
  std::string file;
  SECTION("in a package") {
    auto message = load_error("key.yaml", replace_line(17, "    abbi: abi3"), &file);
    CHECK(message == expect(file,
                            "17:5: error: unknown key 'abbi' in package 'sageattention' "
                            "(did you mean 'abi'?); allowed keys: version, source, project, kernels, abi, "
                            "naming, archs, optional_archs, min_python, min_torch, "
                            "min_cuda, platforms, stable_abi, platform_archs"));
  }
  SECTION("at the top level") {
    auto message = load_error("key_top.yaml", std::string(kBase) + "exlude: []\n", &file);
    CHECK(message == expect(file,
                            "24:1: error: unknown key 'exlude' in the build matrix "
                            "(did you mean 'exclude'?); allowed keys: pythons, platforms, "
                            "cuda, torch, upstream, packages, exclude, profiles"));
  }
  SECTION("in a torch variant, with no close match") {
    auto message = load_error("key_variant.yaml", replace_line(11, "      - {cuda: \"12.6\", url: x}"), &file);
    CHECK(message == expect(file,
                            "11:24: error: unknown key 'url' in an entry of 'variants' of "
                            "torch release '2.8.0'; allowed keys: cuda, pypi"));
  }
}

TEST_CASE("a value of the wrong type says what was expected") {
  std::string file;
  SECTION("a string where a list belongs") {
    auto message = load_error("type_list.yaml", replace_line(19, "    archs: \"8.0\""), &file);
    CHECK(message == expect(file,
                            "19:12: error: expected a list for 'archs' of package "
                            "'sageattention' (like [a, b]), got '8.0'"));
  }
  SECTION("something other than true/false") {
    auto message = load_error("type_bool.yaml", replace_line(12, "      - {cuda: \"12.8\", pypi: yes}"), &file);
    CHECK(message == expect(file,
                            "12:30: error: expected true or false for 'pypi' of an entry "
                            "of 'variants' of torch release '2.8.0', got 'yes'"));
  }
  SECTION("an empty value") {
    auto message = load_error("type_empty.yaml", replace_line(15, "    version:"), &file);
    CHECK(message == expect(file,
                            "15:5: error: expected a single value for 'version' of "
                            "package 'sageattention', got nothing"));
  }
  SECTION("an unknown choice") {
    auto message = load_error("type_choice.yaml", replace_line(17, "    abi: abi4"), &file);
    CHECK(message == expect(file,
                            "17:10: error: 'abi4' is not a valid 'abi' of package "
                            "'sageattention' (did you mean 'abi3'?); valid: abi3, "
                            "per-interpreter"));
  }
  SECTION("a malformed arch") {
    auto message = load_error("type_arch.yaml", replace_line(19, "    archs: [\"8.0\", \"sm_90a\"]"), &file);
    CHECK(message == expect(file,
                            "19:20: error: 'sm_90a' is not a CUDA arch; expected <major>.<minor>[a]: the "
                            "compute capability (\"8.6\"), with an 'a' for an arch-specific target (\"9.0a\")"));
  }
}

TEST_CASE("a torch x CUDA combination that never shipped is refused") {
  std::string file;
  auto message = load_error("torch_cuda.yaml",
                            std::string(kBase) + "  bad:\n    torch: [\"2.8.0\"]\n    cuda: [\"12.9\"]\n", &file);
  // 12.9 is not in this document's cuda table at all.
  CHECK(message == expect(file,
                          "26:12: error: unknown CUDA version '12.9' (did you mean "
                          "'12.6'?); valid: 12.6, 12.8"));

  std::string text = replace_line(6,
                                  "  \"12.8\": {archs: [\"8.0\", \"9.0\", \"9.0a\", \"12.0\"]}\n"
                                  "  \"13.0\": {archs: [\"8.0\", \"9.0\", \"9.0a\", \"12.0\"]}");
  message = load_error("torch_cuda2.yaml", text + "  bad:\n    torch: [\"2.8.0\"]\n    cuda: [\"13.0\"]\n", &file);
  CHECK(message == expect(file,
                          "27:12: error: torch 2.8.0 was never shipped for CUDA 13.0 (it "
                          "ships for CUDA 12.6, 12.8), but profile 'bad' pins both"));
}

TEST_CASE("an arch that the pinned CUDA cannot build is refused") {
  std::string file;
  auto message = load_error(
      "arch_cuda.yaml", std::string(kBase) + "  x:\n    cuda: [\"12.6\"]\n    archs: [\"9.0a\", \"12.0\"]\n", &file);
  CHECK(message == expect(file,
                          "26:21: error: arch 12.0 needs CUDA >= 12.8, but profile 'x' "
                          "pins CUDA 12.6"));
}

TEST_CASE("a package arch that one of its CUDA versions cannot build is refused") {
  std::string file;
  auto message = load_error("pkg_arch.yaml", replace_line(19, "    archs: [\"8.0\", \"12.0\"]"), &file);
  CHECK(message == expect(file,
                          "19:20: error: package 'sageattention' needs arch 12.0, but CUDA "
                          "12.6 (torch 2.8.0) cannot build it: arch 12.0 needs CUDA >= "
                          "12.8. Raise the package's min_cuda, move the arch to "
                          "optional_archs, or exclude the combination"));
  // ...which a min_cuda resolves.
  CHECK(load_error("pkg_arch_ok.yaml", replace_line(19,
                                                    "    archs: [\"8.0\", \"12.0\"]\n"
                                                    "    min_cuda: \"12.8\"")) == "no error");
}

TEST_CASE("a Python the pinned torch has no wheels for is refused") {
  std::string file;
  auto message = load_error("python.yaml",
                            replace_line(1, "pythons: [\"3.9\", \"3.10\", \"3.12\"]") +
                                "  old:\n    torch: [\"2.8.0\"]\n    pythons: [\"3.9\"]\n",
                            &file);
  CHECK(message == expect(file,
                          "26:15: error: torch 2.8.0 has no wheels for Python 3.9 (it "
                          "ships for Python 3.10, 3.12), but profile 'old' pins both"));
}

TEST_CASE("an unknown profile lists the valid ones") {
  auto path = write_temp("profiles.yaml", std::string(kBase) + "  stable:\n    newest_python: true\n");
  Matrix m = load_matrix(path);
  try {
    expand(m, "stabel");
    FAIL("expand accepted an unknown profile");
  } catch (const sb::ConfigError& e) {
    CHECK(std::string(e.what()) == path.string() +
                                       ": error: unknown profile 'stabel' (did you "
                                       "mean 'stable'?); valid profiles: default, stable");
  }
}

TEST_CASE("a profile defined twice is refused at the second definition") {
  std::string file;
  auto message = load_error("dup.yaml", std::string(kBase) + "  default:\n    pypi_only: true\n", &file);
  CHECK(message == expect(file, "24:3: error: duplicate profile 'default' (first defined at line 22)"));
}

TEST_CASE("a duplicate key inside a mapping is refused") {
  std::string file;
  auto message = load_error("dupkey.yaml", replace_line(16, "    kernels: a.json\n    kernels: b.json"), &file);
  CHECK(message == expect(file, "17:5: error: duplicate key 'kernels' (first defined at line 16)"));
}

TEST_CASE("a profile that selects nothing is refused") {
  std::string file;
  auto message =
      load_error("empty.yaml", std::string(kBase) + "  none:\n    cuda: [\"12.6\"]\n    pypi_only: true\n", &file);
  CHECK(message == expect(file,
                          "24:3: error: profile 'none' selects no rows: no valid row "
                          "matches all of its filters (check them against the packages' "
                          "min_* and platforms, and the exclusions)"));
}

TEST_CASE("a profile row id must name a valid row") {
  std::string file;
  auto message = load_error(
      "rowid.yaml", std::string(kBase) + "  one:\n    rows: [sageattention-2.2.0-torch2.8.0-cu128-abi3-linux_x86_6]\n",
      &file);
  CHECK(message == expect(file,
                          "25:12: error: profile 'one' names row "
                          "'sageattention-2.2.0-torch2.8.0-cu128-abi3-linux_x86_6', which is "
                          "not a valid row (did you mean "
                          "'sageattention-2.2.0-torch2.8.0-cu128-abi3-linux_x86_64'?); "
                          "`sagebuild matrix --profile sage2-all` lists them"));
}

TEST_CASE("an exclusion needs a reason and known values") {
  std::string file;
  auto message = load_error("excl.yaml", std::string(kBase) + "exclude:\n  - torch: [\"2.8.0\"]\n", &file);
  CHECK(message == expect(file,
                          "25:5: error: missing key 'reason' in an entry of 'exclude' of "
                          "the build matrix"));
  message = load_error("excl2.yaml", std::string(kBase) + "exclude:\n  - {torch: [\"2.8\"], reason: r}\n", &file);
  CHECK(message == expect(file,
                          "25:14: error: unknown torch release '2.8' (did you mean "
                          "'2.8.0'?); valid: 2.8.0"));
}

TEST_CASE("a torch release the package's naming scheme cannot encode is refused") {
  std::string file;
  auto message = load_error("encode.yaml", replace_line(8, "  \"2.9.10\":"), &file);
  CHECK_THAT(message, Catch::StartsWith(file + ":8:3: error: package 'sageattention' names its "
                                               "wheels by build tag, which cannot encode torch "
                                               "2.9.10 with CUDA 12.6: "));
}

TEST_CASE("a CUDA version that no wheel name can carry is refused") {
  std::string file;
  auto message = load_error("cuda92.yaml", replace_line(5, "  \"9.2\": {archs: [\"8.0\"]}"), &file);
  CHECK_THAT(message, Catch::StartsWith(file + ":5:3: error: CUDA 9.2 cannot be written in a "
                                               "wheel's name: "));
}

TEST_CASE("a CUDA version is major.minor, as nvcc reports its release") {
  std::string file;
  for (const char* written : {"13", "12.8.1"}) {
    INFO(written);
    auto message =
        load_error("cuda_parts.yaml", replace_line(5, "  \"" + std::string(written) + "\": {archs: [\"8.0\"]}"), &file);
    CHECK(message == expect(file, "5:3: error: CUDA version '" + std::string(written) +
                                      "' is not <major>.<minor>; write it like \"12.8\""));
  }
  auto message = load_error("min_cuda.yaml",
                            replace_line(19,
                                         "    archs: [\"8.0\"]\n"
                                         "    min_cuda: \"13\""),
                            &file);
  CHECK_THAT(message, Catch::Contains("error: CUDA version '13' is not <major>.<minor>"));
}

TEST_CASE("an empty document, or one that is not a mapping, says what the top level holds") {
  CHECK_THROWS_WITH(parse_matrix("", "m.yaml"),
                    "m.yaml:1:1: error: expected a mapping for the build matrix, got nothing");
  CHECK_THROWS_WITH(parse_matrix("- pythons\n", "m.yaml"),
                    "m.yaml:1:1: error: expected a mapping for the build matrix, got a list");
  CHECK_THROWS_WITH(parse_matrix("pythons: [\"3.12\"]\n", "m.yaml"),
                    "m.yaml:1:1: error: missing key 'platforms' in the build matrix");
}

TEST_CASE("a torch release naming a Python or CUDA the matrix does not list says where to add it") {
  std::string file;
  auto message = load_error("newpy.yaml", replace_line(9, "    pythons: [\"3.10\", \"3.15\"]"), &file);
  CHECK(message == expect(file,
                          "9:23: error: unknown Python '3.15' (did you mean '3.10'?); valid: "
                          "3.10, 3.12 (a new one goes in the top-level `pythons:` first)"));
  message = load_error("newcuda.yaml", replace_line(11, "      - {cuda: \"13.0\"}"), &file);
  CHECK(message == expect(file,
                          "11:16: error: unknown CUDA version '13.0'; valid: 12.6, 12.8 "
                          "(a new one goes under `cuda:` first)"));
}

TEST_CASE("a package's source kind: ours needs kernels, an upstream tree's must not name them") {
  std::string file;
  CHECK(load_error("src_ok.yaml", with_upstream(replace_line(16,
                                                             "    source: upstream-sageattention\n    project: "
                                                             "sageattention"),
                                                kUpstream)) == "no error");
  auto message = load_error("src_kernels.yaml", replace_line(15, "    version: 2.2.0\n    source: upstream-x"), &file);
  CHECK(message.find(file + ":17:14: error: package 'sageattention' is built from an upstream tree (source: "
                            "upstream-x), which sources/upstream-x.yaml describes; `kernels` names our own tree's "
                            "manifest: remove it") == 0);
  message = load_error("src_kind.yaml", replace_line(16, "    source: Upstream/Tree"), &file);
  CHECK(message.find(file + ":16:13: error: source 'Upstream/Tree' of package 'sageattention' is not a source kind") ==
        0);
  message =
      load_error("src_project.yaml", replace_line(16, "    kernels: k.json\n    project: \"sage attention\""), &file);
  CHECK(message.find(file + ":17:14:") == 0);
}

TEST_CASE("upstream: the repository and full commit an upstream source's tree is checked out at") {
  std::string file;
  std::string upstream_package = replace_line(16, "    source: upstream-sageattention\n    project: sageattention");
  SECTION("required once a package is built from upstream's tree") {
    auto message = load_error("up_missing.yaml", upstream_package, &file);
    CHECK(message == expect(file,
                            "16:13: error: package 'sageattention' is built from an upstream tree (source: "
                            "upstream-sageattention), but the matrix has no top-level `upstream:` saying which "
                            "repository and commit; add `upstream: {repository: owner/name, commit: <40 hex "
                            "digits>}`"));
    // Our own tree needs none.
    CHECK(load_error("up_ours.yaml", kBase) == "no error");
  }
  SECTION("the commit: 40 lower-case hex digits, not a branch, tag or abbreviation") {
    for (const char* commit :
         {"d1a57a5", "main", "v2.2.0", "D1A57A546C3D395B1FFCBEECC66D81DB76F3B4B5",
          "d1a57a546c3d395b1ffcbeecc66d81db76f3b4b5a", "d1a57a546c3d395b1ffcbeecc66d81db76f3b4bg"}) {
      INFO(commit);
      auto message =
          load_error("up_commit.yaml",
                     with_upstream(upstream_package, std::string("upstream: {repository: thu-ml/SageAttention, "
                                                                 "commit: ") +
                                                         commit + "}"),
                     &file);
      CHECK(message == expect(file, "13:54: error: upstream commit '" + std::string(commit) +
                                        "' is not a full commit id; write its 40 lower-case hex digits (a branch or "
                                        "tag moves, an abbreviated id can become ambiguous): git rev-parse <ref>"));
    }
  }
  SECTION("the repository: GitHub's owner/name") {
    for (const char* repository : {"SageAttention", "thu-ml/", "/SageAttention", "thu-ml/Sage/Attention",
                                   "https://github.com/thu-ml/SageAttention", "thu-ml/Sage$Attention"}) {
      INFO(repository);
      auto message =
          load_error("up_repo.yaml",
                     with_upstream(upstream_package, std::string("upstream: {repository: \"") + repository +
                                                         "\", commit: d1a57a546c3d395b1ffcbeecc66d81db76f3b4b5}"),
                     &file);
      CHECK(message == expect(file, "13:24: error: upstream repository '" + std::string(repository) +
                                        "' is not a GitHub owner/name; write it like \"thu-ml/SageAttention\""));
    }
  }
  SECTION("an unknown key") {
    auto message = load_error("up_key.yaml",
                              with_upstream(upstream_package,
                                            "upstream: {repository: thu-ml/SageAttention, "
                                            "ref: d1a57a546c3d395b1ffcbeecc66d81db76f3b4b5}"),
                              &file);
    CHECK(message.find(file + ":13:46: error: unknown key 'ref' in 'upstream'") == 0);
  }
  SECTION("the rows of such a package carry it; our rows do not") {
    std::string both = with_upstream(std::string(kBase), kUpstream);
    both.replace(both.find("profiles:\n"), 0,
                 "  upstream-sageattention:\n    source: upstream-sageattention\n    project: sageattention\n"
                 "    version: 2.2.0\n    abi: per-interpreter\n    naming: build-tag\n    archs: [\"8.0\"]\n");
    Matrix m = parse_matrix(both, "both.yaml");
    std::size_t upstream_rows = 0;
    for (const Row& r : m.rows) {
      INFO(r.id);
      if (r.package == "upstream-sageattention") {
        ++upstream_rows;
        CHECK(r.upstream_repository == "thu-ml/SageAttention");
        CHECK(r.upstream_commit == "d1a57a546c3d395b1ffcbeecc66d81db76f3b4b5");
      } else {
        CHECK(r.upstream_commit.empty());
        CHECK(r.upstream_repository.empty());
      }
    }
    CHECK(upstream_rows > 0);
  }
}

TEST_CASE("a matrix whose rows before exclusions pass the bound is refused at once, at the package") {
  // 100 Pythons x 100 platforms x 10 torch releases x 10 CUDA variants: 10^6
  // rows from some 30 KB (the 2026-11-28 finding took 16 s and 2.7 GiB).
  std::string py;
  for (int i = 0; i < 100; ++i) py += std::string(i ? ", " : "") + "\"3." + std::to_string(10 + i) + "\"";
  std::string y = "pythons: [" + py + "]\nplatforms:\n";
  for (int i = 0; i < 100; ++i)
    y +=
        "  p" + std::to_string(i) + ": {runner: r, pypi_torch_has_cuda: true, torch_index: \"https://x/{cuda_tag}\"}\n";
  y += "cuda:\n";
  for (int v = 0; v < 10; ++v) y += "  \"12." + std::to_string(v) + "\": {archs: [\"8.0\"]}\n";
  y += "torch:\n";
  for (int t = 0; t < 10; ++t) {
    y += "  \"2." + std::to_string(t) + ".0\":\n    pythons: [" + py + "]\n    variants:\n";
    for (int v = 0; v < 10; ++v) y += "      - {cuda: \"12." + std::to_string(v) + "\"}\n";
  }
  y += "packages:\n  pkg:\n    version: 1.0.0\n    kernels: k.json\n    abi: per-interpreter\n"
       "    naming: local-version\n    archs: [\"8.0\"]\nprofiles:\n  default:\n    torch: [\"2.0.0\"]\n";
  auto start = std::chrono::steady_clock::now();
  std::string file;
  std::string message = load_error("product.yaml", y, &file);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK_THAT(message, Catch::Contains("more than 10000 rows before exclusions"));
}

TEST_CASE("platform tags and runners are checked: they reach names, paths and the workflow") {
  std::string text = kBase;
  text.replace(text.find("linux_x86_64:"), 13, "\"linux_x86_64; rm -rf ~\":");
  CHECK_THAT(load_error("tag.yaml", text), Catch::Contains("platform tag 'linux_x86_64; rm -rf ~'"));
  text = kBase;
  text.replace(text.find("runner: ubuntu-22.04"), 20, "runner: \"ubuntu $(id)\"");
  CHECK_THAT(load_error("runner.yaml", text), Catch::Contains("runner 'ubuntu $(id)'"));
}

TEST_CASE("the matrix file is read the one way: a FIFO or a device is refused before reading", "[posix]") {
  CHECK_THROWS_WITH(load_matrix("/dev/zero"), Catch::Contains("a character device, not a regular file"));
}

TEST_CASE("torch and Python versions are read into numbers where the file names them") {
  std::string file;
  SECTION("a torch release is major.minor[.patch]") {
    for (const char* written : {"2", "2.8.0.1"}) {
      INFO(written);
      auto message = load_error("torch_parts.yaml", replace_line(8, "  \"" + std::string(written) + "\":"), &file);
      CHECK(message == expect(file, "8:3: error: torch version '" + std::string(written) +
                                        "' is not <major>.<minor>[.<patch>]; write it like \"2.11.0\""));
    }
  }
  SECTION("a Python is major.minor") {
    auto message = load_error("python_parts.yaml", replace_line(1, "pythons: [\"3.10\", \"3\"]"), &file);
    CHECK(message == expect(file, "1:19: error: Python version '3' is not <major>.<minor>; write it like \"3.12\""));
  }
  SECTION("one release written two ways is refused at the second") {
    auto message = load_error("torch_twice.yaml",
                              replace_line(12,
                                           "      - {cuda: \"12.8\", pypi: true}\n"
                                           "  \"2.8\":\n"
                                           "    pythons: [\"3.10\"]\n"
                                           "    variants: [{cuda: \"12.8\"}]"),
                              &file);
    CHECK(message == expect(file, "13:3: error: torch 2.8 is the release 2.8.0 names already; list each release once"));
  }
  SECTION("a package minimum is checked as well") {
    auto message = load_error("min_python.yaml",
                              replace_line(19,
                                           "    archs: [\"8.0\"]\n"
                                           "    min_python: \"3.12.1\""),
                              &file);
    CHECK_THAT(message, Catch::Contains("error: Python version '3.12.1' is not <major>.<minor>"));
  }
}
