// sb_pack_example OUTDIR: writes a small pure-Python wheel
// (sbexample-0.1.0, py3-none-any) with the pack writer and prints its path.
// tests/verify/test_roundtrip.py installs it with pip into a fresh venv.
#include <cstdio>
#include <exception>

#include "sagebuild/pack/wheel_writer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sb_pack_example OUTDIR\n");
    return 2;
  }
  try {
    sb::pack::WheelSpec spec;
    spec.name = "sbexample";
    spec.version = *sb::wheel::parse_version("0.1.0");
    spec.tags = {{"py3"}, {"none"}, {"any"}};
    spec.summary = "A wheel written by sagebuild's pack writer";
    spec.requires_python = ">=3.8";
    spec.license_expression = "Apache-2.0";
    std::vector<sb::pack::PayloadFile> payload = {
        {"sbexample/__init__.py", std::string("VALUE = 42\nfrom .greet import greet\n"), std::nullopt},
        {"sbexample/greet.py", std::string("def greet(name):\n    return 'hello ' + name\n"), std::nullopt}};
    auto result = sb::pack::write_wheel(spec, payload, {argv[1], std::nullopt});
    std::printf("%s\n", result.path.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sb_pack_example: %s\n", e.what());
    return 2;
  }
}
