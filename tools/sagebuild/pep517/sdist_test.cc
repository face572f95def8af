// The sdist writer's name (PEP 625) and its tree walk: the link rule, the
// size bounds, streaming.  The full `sagebuild sdist` of a copy of
// this checkout is tests/cli/test_hostile_cli.py's.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "sagebuild/archive/tar_gz_writer.h"
#include "sagebuild/common/error.h"
#include "sagebuild/common/os.h"
#include "sagebuild/pep517/sdist.h"

using namespace sb;
namespace fs = std::filesystem;

TEST_CASE("sdist names follow PEP 625: normalized name with '_', normalized version") {
  CHECK(pep517::sdist_base_name("sageattention", "2.2.0") == "sageattention-2.2.0");
  CHECK(pep517::sdist_base_name("Sage.Attention", "2.2") == "sage_attention-2.2");
  CHECK(pep517::sdist_base_name("sage--attention", "v1.0.0-post1") == "sage_attention-1.0.0.post1");
  CHECK_THROWS_WITH(pep517::sdist_base_name("-bad", "1.0"), Catch::Contains("PEP 625"));
  CHECK_THROWS_WITH(pep517::sdist_base_name("ok", "not a version"), Catch::Contains("PEP 625"));
}

TEST_CASE("the tar writer streams members from files and refuses one that changed size") {
  auto dir = fs::temp_directory_path() / ("sb-sdist-stream-" + std::to_string(process_id()));
  fs::create_directories(dir);
  std::string big(3 << 20, 'q');  // several 64 KiB pieces
  std::ofstream(dir / "f", std::ios::binary) << big;
  tar::Member streamed{"p/f", {}, 0644};
  streamed.file = dir / "f";
  streamed.size = big.size();
  tar::write_tar_gz(dir / "a.tar.gz", {streamed}, 0);
  tar::write_tar_gz(dir / "b.tar.gz", {tar::Member{"p/f", big, 0644}}, 0);
  auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  // The same archive whether the bytes were in memory or streamed.
  CHECK(bytes(dir / "a.tar.gz") == bytes(dir / "b.tar.gz"));
  streamed.size = big.size() - 1;
  CHECK_THROWS_WITH(tar::write_tar_gz(dir / "c.tar.gz", {streamed}, 0), Catch::Contains("changed size"));
  CHECK_FALSE(fs::exists(dir / "c.tar.gz"));
  fs::remove_all(dir);
}
