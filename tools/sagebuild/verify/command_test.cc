// The verify command's contract: exit codes, human and JSON output.
#include <catch2/catch.hpp>

#include "sagebuild/common/corpus_test.h"

#include <sstream>

#include "sagebuild/verify/command.h"

using namespace sb;
using namespace sb::verify;

namespace {
const std::string kCorpus = SAGEBUILD_CORPUS_DIR;
const std::string kClean = kCorpus + "/fixtures/pip/simple_ok/simple-0.1.0-py2.py3-none-any.whl";
const std::string kStrictOnly = kCorpus + "/wheels/pip/compilewheel-1.0-py2.py3-none-any.whl";  // S:M2
// Every one of its 7 RECORD digests is wrong, and its Tag line disagrees (S:W5).
const std::string kBroken = kCorpus + "/fixtures/installer/record_hash_mismatch/fancy-1.0.0-py2.py3-none-any.whl";

int run(std::vector<std::string> files, bool lenient, bool json, std::string* out_text = nullptr,
        std::string* err_text = nullptr) {
  Options o;
  o.lenient = lenient;
  std::ostringstream out, err;
  int code = run_verify(files, o, json, out, err);
  if (out_text) *out_text = out.str();
  if (err_text) *err_text = err.str();
  return code;
}
}  // namespace

TEST_CASE("verify command: exit codes 0 clean, 1 findings, 2 I/O errors") {
  SB_SKIP_WITHOUT_CORPUS();
  CHECK(run({kClean}, false, false) == 0);
  CHECK(run({kStrictOnly}, false, false) == 1);
  CHECK(run({kStrictOnly}, true, false) == 0);  // --lenient: Strict is reported, not fatal
  CHECK(run({kBroken}, true, false) == 1);
  std::string err;
  CHECK(run({kClean, kCorpus + "/nope.whl"}, false, false, nullptr, &err) == 2);
  CHECK(err.find("nope.whl: no such file") != std::string::npos);
}

TEST_CASE("verify command: human output names file, rule, found and expected, then a summary") {
  SB_SKIP_WITHOUT_CORPUS();
  std::string out;
  run({kBroken}, false, false, &out);
  CHECK(out.find(kBroken + ": R5 error [fancy/__init__.py]: content does not match RECORD's sha256 digest; expected") !=
        std::string::npos);
  CHECK(out.find(kBroken + ": FAIL (7 errors, 1 strict, 0 warnings)") != std::string::npos);
}

TEST_CASE("verify command: --json is one array of reports") {
  SB_SKIP_WITHOUT_CORPUS();
  std::string out;
  CHECK(run({kClean, kBroken}, false, true, &out) == 1);
  auto j = nlohmann::json::parse(out);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["ok"] == true);
  CHECK(j[1]["ok"] == false);
  CHECK(j[1]["errors"] == 7);  // the fixture lists a wrong digest for all 7 files
  CHECK(j[1]["findings"][0].contains("expected"));
}
