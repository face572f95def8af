// PEP 508 requirements: the grammar's forms, marker structure, and errors
// that point at the column where parsing stopped.
#include <catch2/catch.hpp>

#include "sagebuild/wheel/requirement.h"

using namespace sb::wheel;

namespace {

Requirement req(std::string_view text) {
  std::string why;
  auto r = parse_requirement(text, &why);
  INFO("'" << text << "': " << why);
  REQUIRE(r.has_value());
  return *r;
}

}  // namespace

TEST_CASE("requirement: names, extras and specifiers") {
  auto r = req("torch==2.8.0");
  CHECK(r.name == "torch");
  CHECK(r.specifier.str() == "==2.8.0");
  CHECK_FALSE(r.url);
  CHECK_FALSE(r.marker);

  r = req("  Foo.Bar_baz [ security , tests ] ( >= 1.0 , < 2 )  ");
  CHECK(r.name == "Foo.Bar_baz");
  CHECK(r.extras == std::vector<std::string>{"security", "tests"});
  CHECK(r.specifier.str() == ">=1.0,<2");
  CHECK(r.str() == "Foo.Bar_baz[security,tests]>=1.0,<2");

  CHECK(req("name").str() == "name");
  CHECK(req("name[]").extras.empty());
  CHECK(req("name>=1.0,").specifier.str() == ">=1.0");  // trailing comma allowed
  CHECK(req("name ~= 2.2").specifier.str() == "~=2.2");
}

TEST_CASE("requirement: direct URLs need whitespace before a marker") {
  auto r = req("pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee");
  REQUIRE(r.url);
  CHECK(*r.url == "https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee");
  CHECK(r.specifier.empty());

  r = req("name[quux] @ file:///tmp/x.whl ; python_version >= '3.9'");
  REQUIRE(r.marker);
  CHECK(r.str() == "name[quux] @ file:///tmp/x.whl ; python_version >= \"3.9\"");

  // Without whitespace the ';' belongs to the URL.
  r = req("name @ https://host/x;y");
  CHECK(*r.url == "https://host/x;y");
  CHECK_FALSE(r.marker);
}

TEST_CASE("requirement: markers parse into a tree with and binding tighter than or") {
  auto r = req("foo; python_version < '3.10' or sys_platform == \"win32\" and extra == 'gpu'");
  REQUIRE(r.marker);
  const Marker& m = *r.marker;
  CHECK(m.kind == Marker::Kind::Or);
  REQUIRE(m.children.size() == 2);
  CHECK(m.children[0].kind == Marker::Kind::Compare);
  CHECK(m.children[0].lhs.is_variable);
  CHECK(m.children[0].lhs.text == "python_version");
  CHECK(m.children[0].op == "<");
  CHECK(m.children[0].rhs.text == "3.10");
  CHECK(m.children[1].kind == Marker::Kind::And);

  auto p = parse_marker("(os_name == 'nt' or os_name == 'posix') and 'linux' in sys_platform");
  REQUIRE(p);
  CHECK(p->kind == Marker::Kind::And);
  CHECK(p->str() == "(os_name == \"nt\" or os_name == \"posix\") and \"linux\" in sys_platform");
  CHECK(parse_marker(p->str())->str() == p->str());

  auto n = parse_marker("platform_machine not  in 'x86_64 aarch64'");
  REQUIRE(n);
  CHECK(n->op == "not in");
  CHECK(parse_marker("implementation_name===\"cpython\"")->op == "===");
  // Legacy dotted names are accepted and given their PEP 508 spelling.
  CHECK(parse_marker("os.name == 'nt'")->str() == "os_name == \"nt\"");
}

TEST_CASE("requirement: invalid requirements say where and what was expected") {
  for (const char* bad : {"",
                          "-foo",
                          "foo-",
                          "foo[",
                          "foo[bar",
                          "foo[bar,]",
                          "foo[bar baz]",
                          "foo==",
                          "foo==1.0.x",
                          "invalid-version ==2010i",
                          "foo >= 1.0 <2",
                          "foo @",
                          "foo @ not-a-url",
                          "foo @ https://x/y; os_name == 'nt'",
                          "foo;",
                          "foo; os_name",
                          "foo; os_name ==",
                          "foo; os_name == nt",
                          "foo; unknown_var == 'x'",
                          "foo; os_name == 'nt",
                          "foo; (os_name == 'nt'",
                          "foo; os_name == 'nt' and",
                          "foo; os_name == 'nt' xor os_name == 'x'",
                          "foo; os_name notin 'x'",
                          "foo bar"}) {
    std::string why;
    INFO("'" << bad << "'");
    CHECK_FALSE(parse_requirement(bad, &why).has_value());
    CHECK(why.find("expected") != std::string::npos);
  }
}

TEST_CASE("requirement: our torch pin") {
  auto pin = pin_requirement("torch", *parse_version("2.8.0"));
  CHECK(pin.str() == "torch==2.8.0");
  auto back = parse_requirement(pin.str());
  REQUIRE(back);
  CHECK(back->specifier.contains(*parse_version("2.8.0+cu128")));
  CHECK_FALSE(back->specifier.contains(*parse_version("2.8.1")));
}

TEST_CASE("requirement: the older Requires-Dist spellings setuptools still writes") {
  // Parenthesized specifiers, ' ; ' before the marker, parenthesized marker terms.
  auto r = req("pytest (>=3.0.0) ; extra == 'test'");
  CHECK(r.str() == "pytest>=3.0.0; extra == \"test\"");
  r = req("pytest-black (>=0.3.7) ; (platform_python_implementation != \"PyPy\") and extra == 'testing'");
  CHECK(r.marker->kind == Marker::Kind::And);
  CHECK(r.str() == "pytest-black>=0.3.7; platform_python_implementation != \"PyPy\" and extra == \"testing\"");
  r = req("requests-toolbelt (!=0.9.0,>=0.8.0)");
  CHECK(r.specifier.contains(*parse_version("1.0.0")));
  CHECK_FALSE(r.specifier.contains(*parse_version("0.9.0")));
  CHECK(req("Pillow (==4.*)").specifier.contains(*parse_version("4.3.0")));
  CHECK(req("build[virtualenv] ; extra == 'testing'").extras == std::vector<std::string>{"virtualenv"});
  CHECK(req("keyring>=21.2.0; platform_machine != \"ppc64le\" and platform_machine != \"s390x\"")
            .marker->children.size() == 2);
}
