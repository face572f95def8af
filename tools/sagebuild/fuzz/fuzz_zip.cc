// The strict zip reader: structure, streaming every member, reading small
// ones whole, and random access (the binary readers' view) at scattered offsets.
#include <algorithm>
#include <memory>

#include "sagebuild/archive/zip_reader.h"
#include "sagebuild/binary/byte_source.h"
#include "sagebuild/fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sb;
  auto zip = zip::Reader::open(std::make_unique<binary::MemorySource>(std::string(fuzz::bytes(data, size))));
  if (zip->usable()) {
    const auto& entries = zip->entries();
    for (std::size_t i = 0; i < entries.size() && i < 64; ++i) {
      zip->read(i, [](const std::uint8_t*, std::size_t) { return true; });
      std::string text, error;
      zip->read_small(i, 1 << 16, text, error);
      if (zip->find(entries[i].name) < 0) fuzz::broken("find() misses a listed member");
      if (auto src = zip->open_member(i, error)) {
        std::uint8_t buf[64];
        std::uint64_t n = src->size();
        for (std::uint64_t at : {n / 2, std::uint64_t{0}, n > 0 ? n - 1 : 0, n / 3, n / 4 * 3, n / 5})
          src->read(at, buf, static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, n - std::min(at, n))));
      }
    }
  }
  fuzz::check_bounded(zip->findings());
  return 0;
}
