// `sagebuild index --previous` on the input as the previous site's
// manifest.json: parsed, merged into the index and rendered.  A clear error
// (UsageError) is fine; anything else is a crash, and so is a page whose path
// would leave the site or a landing-page command holding shell text.
#include "sagebuild/common/error.h"
#include "sagebuild/fuzz/fuzz.h"
#include "sagebuild/fuzz/fuzz_site.h"
#include "sagebuild/index/previous.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  try {
    fuzz::check_site(index::parse_previous_manifest(fuzz::bytes(data, size), "manifest.json"));
  } catch (const UsageError&) {
  }
  return 0;
}
