#include "sagebuild/binary/byte_source.h"

#include <cstring>

namespace sb::binary {

bool MemorySource::read(std::uint64_t offset, void* dst, std::size_t n) {
  if (!in_bounds(offset, n, bytes_.size())) return false;
  if (n) std::memcpy(dst, bytes_.data() + offset, n);
  return true;
}

}  // namespace sb::binary
