// entry_points.txt: the INI parser and the script-name and value checks.
#include "sagebuild/distinfo/entry_points.h"
#include "sagebuild/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  auto parsed = distinfo::parse_entry_points(fuzz::bytes(data, size), "pkg-1.0.dist-info/entry_points.txt", 4096);
  fuzz::check_bounded(parsed.findings);
  fuzz::check_bounded(
      distinfo::check_entry_points(parsed.entries, "pkg-1.0.dist-info/entry_points.txt", {"tool", "other-tool"}));
  return 0;
}
