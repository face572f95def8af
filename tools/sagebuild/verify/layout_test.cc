#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "sagebuild/verify/extension_suffix.h"
#include "sagebuild/verify/layout.h"

using namespace sb;
using namespace sb::verify;

namespace {
std::set<std::string> rules(const Findings& f) {
  std::set<std::string> r;
  for (const auto& x : f) r.insert(std::string(1, severity_letter(x.severity)) + ":" + x.rule);
  return r;
}
wheel::WheelFilename name(const std::string& basename) { return *wheel::parse_wheel_filename(basename).filename; }
const auto kFn = name("sageattention-2.2.0-cp39-abi3-linux_x86_64.whl");
}  // namespace

TEST_CASE("layout: one dist-info with the normalized name is clean") {
  Findings f;
  auto l = check_layout({"sageattention/__init__.py", "sageattention-2.2.0.dist-info/RECORD",
                         "sageattention-2.2.0.dist-info/licenses/LICENSE", "deep/x.dist-info/METADATA"},
                        &kFn, f);
  CHECK(f.empty());
  CHECK(l.dist_info == "sageattention-2.2.0.dist-info");
}

TEST_CASE("layout: D1 none or several dist-info; D2 name mismatch (E) or not normalized (W)") {
  Findings f;
  check_layout({"a.py"}, &kFn, f);
  CHECK(rules(f) == std::set<std::string>{"E:D1"});
  f.clear();
  check_layout({"sageattention-2.2.0.dist-info/RECORD", "other-1.0.dist-info/RECORD"}, &kFn, f);
  CHECK(rules(f) == std::set<std::string>{"E:D1"});
  f.clear();
  check_layout({"fancy-2.2.0.dist-info/RECORD"}, &kFn, f);
  CHECK(rules(f) == std::set<std::string>{"E:D2"});
  f.clear();
  check_layout({"SageAttention-2.2.0.dist-info/RECORD"}, &kFn, f);
  CHECK(rules(f) == std::set<std::string>{"W:D2"});
}

TEST_CASE("layout: D3 .data schemes and stems, D6-D9 warnings") {
  Findings f;
  auto l = check_layout({"sageattention-2.2.0.dist-info/RECORD", "sageattention-2.2.0.data/scripts/tool",
                         "sageattention-2.2.0.data/purelib/m.py"},
                        &kFn, f);
  CHECK(f.empty());
  CHECK(l.data_scripts == std::vector<std::string>{"tool"});
  check_layout({"sageattention-2.2.0.dist-info/RECORD", "sageattention-2.2.0.data/bin/tool"}, &kFn, f);
  CHECK(rules(f) == std::set<std::string>{"E:D3"});
  f.clear();
  check_layout({"sageattention-2.2.0.dist-info/RECORD", "other-1.data/data/x"}, &kFn, f);
  CHECK(rules(f) == std::set<std::string>{"E:D3"});
  f.clear();
  check_layout({"sageattention-2.2.0.dist-info/RECORD", "p/__pycache__/m.cpython-312.pyc",
                "sageattention-2.2.0.dist-info/INSTALLER", "sageattention-2.2.0.dist-info/extra/x",
                "sageattention-2.2.0.dist-info/RECORD.jws"},
               &kFn, f);
  CHECK(rules(f) == std::set<std::string>{"W:D6", "W:D7", "W:D8", "W:D9"});
}

TEST_CASE("layout: D5 redundant purelib/platlib, D10 native code in a pure wheel") {
  Findings f;
  std::vector<std::string> m = {"sageattention-2.2.0.dist-info/RECORD", "sageattention-2.2.0.data/platlib/x.py"};
  auto l = check_layout(m, &kFn, f);
  check_purelib_layout(l, m, false, &kFn, f);
  CHECK(rules(f) == std::set<std::string>{"W:D5"});
  f.clear();
  auto any = name("x-1.0-py3-none-any.whl");
  m = {"x-1.0.dist-info/RECORD", "x.pyd"};
  l = check_layout(m, &any, f);
  check_purelib_layout(l, m, false, &any, f);
  CHECK(rules(f) == std::set<std::string>{"W:D10"});
}

TEST_CASE("extension suffixes: P10 in abi3 wheels, P11 against cp tags") {
  CHECK(extension_interpreter("a/m.cpython-311-x86_64-linux-gnu.so") == "cp311");
  CHECK(extension_interpreter("m.cpython-313t-x86_64-linux-gnu.so") == "cp313t");
  CHECK(extension_interpreter("m.cp312-win_amd64.pyd") == "cp312");
  CHECK(extension_interpreter("m.abi3.so") == "abi3");
  CHECK_FALSE(extension_interpreter("libfoo.so"));
  Findings f;
  check_extension_suffixes({"p/_C.abi3.so", "p/_D.cpython-39-x86_64-linux-gnu.so"}, kFn, f);
  CHECK(rules(f) == std::set<std::string>{"S:P10"});
  f.clear();
  auto cp313 = name("t-1-cp313-cp313-linux_x86_64.whl");
  check_extension_suffixes({"t.cpython-311-x86_64-linux-gnu.so"}, cp313, f);
  CHECK(rules(f) == std::set<std::string>{"S:P11"});
  f.clear();
  check_extension_suffixes({"t.cpython-313-x86_64-linux-gnu.so", "libhelper.so"}, cp313, f);
  CHECK(f.empty());
}
