#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/fs.h"
#include "sagebuild/common/os.h"
#include "sagebuild/pack/wheel_writer.h"

using namespace sb;
using namespace sb::pack;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("sb-pack-test-" + std::to_string(sb::process_id()) + "-" +
                                               std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

WheelSpec spec(const fs::path& license) {
  WheelSpec s;
  s.name = "sageattention";
  s.version = *wheel::parse_version("2.2.0");
  s.build_tag = "21100.130";
  s.tags = {{"cp39"}, {"abi3"}, {"linux_x86_64"}};
  s.summary = "Quantized attention";
  s.requires_python = ">=3.9";
  s.requires_dist = {"torch==2.11.0"};
  s.license_expression = "Apache-2.0";
  s.license_file = license;
  return s;
}

std::vector<std::string> names_in(const fs::path& wheel) {
  auto r = zip::Reader::open(wheel);
  std::vector<std::string> n;
  for (const auto& e : r->entries()) n.push_back(e.name);
  return n;
}

}  // namespace

TEST_CASE("pack: file name, member order, modes and RECORD") {
  TempDir dir;
  write_file_atomic(dir.path / "LICENSE", "Apache License 2.0\n");
  write_file_atomic(dir.path / "lib.so", std::string(1000, '\x7f'));
  std::vector<PayloadFile> payload = {{"sageattention/core.py", std::string("print('x')\n"), std::nullopt},
                                      {"sageattention/_C.abi3.so", dir.path / "lib.so", std::nullopt},
                                      {"sageattention/__init__.py", std::string(), std::nullopt}};
  auto result = write_wheel(spec(dir.path / "LICENSE"), payload, {dir.path, 0});
  CHECK(result.path.filename() == "sageattention-2.2.0-21100.130-cp39-abi3-linux_x86_64.whl");
  CHECK(names_in(result.path) == std::vector<std::string>{
                                     // bytewise: 'C' (0x43) sorts before '_' (0x5f)
                                     "sageattention/_C.abi3.so", "sageattention/__init__.py", "sageattention/core.py",
                                     "sageattention-2.2.0.dist-info/METADATA", "sageattention-2.2.0.dist-info/WHEEL",
                                     "sageattention-2.2.0.dist-info/licenses/LICENSE",
                                     "sageattention-2.2.0.dist-info/RECORD"});
  auto r = zip::Reader::open(result.path);
  CHECK((r->entries()[0].unix_mode() & 0777) == 0755);
  CHECK((r->entries()[1].unix_mode() & 0777) == 0644);
  REQUIRE(result.record.size() == 7);
  CHECK(result.record[1].hash == "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");  // empty file
  CHECK(result.record[0].size == "1000");
  CHECK(result.record.back().hash.empty());
  std::string record, error;
  REQUIRE(r->read_small(6, 1 << 20, record, error));
  CHECK(record.substr(record.size() - 39) == "sageattention-2.2.0.dist-info/RECORD,,\n");
}

TEST_CASE("pack: the same inputs give a byte-identical wheel; another time does not") {
  TempDir a, b;
  write_file_atomic(a.path / "LICENSE", "L\n");
  auto payload = [] { return std::vector<PayloadFile>{{"sageattention/x.py", std::string("x = 1\n"), std::nullopt}}; };
  auto w1 = write_wheel(spec(a.path / "LICENSE"), payload(), {a.path, 1700000000});
  fs::copy_file(a.path / "LICENSE", b.path / "LICENSE");
  auto w2 = write_wheel(spec(b.path / "LICENSE"), payload(), {b.path, 1700000000});
  CHECK(read_file(w1.path) == read_file(w2.path));
  auto w3 = write_wheel(spec(b.path / "LICENSE"), payload(), {b.path, 1600000000});
  CHECK(read_file(w1.path) != read_file(w3.path));
}

TEST_CASE("pack: timestamps come from SOURCE_DATE_EPOCH or 2020-01-01") {
  sb::set_environment_variable("SOURCE_DATE_EPOCH", std::nullopt);
  CHECK(timestamp_from_environment() == kDefaultTimestamp);
  sb::set_environment_variable("SOURCE_DATE_EPOCH", "1234567890");
  CHECK(timestamp_from_environment() == 1234567890);
  sb::set_environment_variable("SOURCE_DATE_EPOCH", "yesterday");
  CHECK_THROWS_AS(timestamp_from_environment(), UsageError);
  sb::set_environment_variable("SOURCE_DATE_EPOCH", std::nullopt);
}

TEST_CASE("pack: bad payloads are refused with the reason") {
  TempDir dir;
  auto s = spec({});
  auto refuse = [&](std::string name) { return write_wheel(s, {{name, std::string(), std::nullopt}}, {dir.path, 0}); };
  CHECK_THROWS_WITH(refuse("../x.py"), Catch::Contains("without '..'"));
  CHECK_THROWS_WITH(refuse("/abs.py"), Catch::Contains("relative"));
  CHECK_THROWS_WITH(refuse("sageattention-2.2.0.dist-info/METADATA"), Catch::Contains("generates those"));
  CHECK_THROWS_AS(
      write_wheel(s, {{"a.py", std::string(), std::nullopt}, {"a.py", std::string(), std::nullopt}}, {dir.path, 0}),
      UsageError);
  CHECK(fs::is_empty(dir.path));  // nothing half-written
}

TEST_CASE("pack: collect_staged walks a directory and refuses symlinks", "[posix]") {
  TempDir dir;
  fs::create_directories(dir.path / "pkg" / "sub");
  write_file_atomic(dir.path / "pkg" / "sub" / "m.py", "");
  write_file_atomic(dir.path / "pkg" / "__init__.py", "");
  auto files = collect_staged(dir.path);
  REQUIRE(files.size() == 2);
  std::vector<std::string> names{files[0].archive_name, files[1].archive_name};
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"pkg/__init__.py", "pkg/sub/m.py"});
  fs::create_symlink(dir.path / "pkg" / "__init__.py", dir.path / "pkg" / "link.py");
  CHECK_THROWS_AS(collect_staged(dir.path), IoError);
}

TEST_CASE("pack: default modes") {
  CHECK(default_mode("a/_C.abi3.so") == 0755);
  CHECK(default_mode("a/libcudart.so.12") == 0755);
  CHECK(default_mode("a/_C.pyd") == 0755);
  CHECK(default_mode("a/x.py") == 0644);
  CHECK(default_mode("a/x.so.py") == 0644);
}
