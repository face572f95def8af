// The matrix loader's row expansion (matrix/rows.cc): the bytes choose a
// matrix's shape (how many Pythons, platforms, CUDA releases, torch releases
// and their variants, packages with their filters and ABI mode, exclusions)
// and the YAML is written from it, so nearly every input reaches
// compute_rows(), which random YAML (fuzz_matrix) seldom does.  Invariants:
// a ConfigError or a plan of at most kMaxRows rows, each row's Pythons among
// its torch's; the row count bound is checked before rows are made (a
// product of millions is refused, not built: the 2026-11-28 finding
// matrix-row-product-1e6).
#include <string>

#include "sagebuild/common/error.h"
#include "sagebuild/fuzz/fuzz.h"
#include "sagebuild/matrix/matrix.h"
#include "sagebuild/matrix/rows.h"

namespace {

struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  unsigned next(unsigned bound) {  // 0..bound-1; 0 once the input is spent
    if (n == 0 || bound == 0) return 0;
    --n;
    return *p++ % bound;
  }
};

std::string list(const std::string& prefix, unsigned count, unsigned start = 0) {
  std::string out = "[";
  for (unsigned i = 0; i < count; ++i)
    out += (i ? ", " : "") + std::string("\"") + prefix + std::to_string(start + i) + "\"";
  return out + "]";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes b{data, size};
  // Counts up to a few hundred: products far past kMaxRows are reachable.
  unsigned pythons = 1 + b.next(120), platforms = 1 + b.next(60), cudas = 1 + b.next(4), torches = 1 + b.next(40);
  std::string y = "pythons: " + list("3.", pythons, 10) + "\nplatforms:\n";
  for (unsigned i = 0; i < platforms; ++i)
    y += "  p" + std::to_string(i) + ": {runner: r, pypi_torch_has_cuda: " + (b.next(2) ? "true" : "false") +
         ", torch_index: \"https://x/{cuda_tag}\"}\n";
  y += "cuda:\n";
  for (unsigned i = 0; i < cudas; ++i) y += "  \"12." + std::to_string(6 + i) + "\": {archs: [\"8.0\", \"9.0\"]}\n";
  y += "torch:\n";
  for (unsigned t = 0; t < torches; ++t) {
    unsigned first = b.next(pythons), count = 1 + b.next(pythons - first);
    y += "  \"2." + std::to_string(t) + ".0\":\n    pythons: " + list("3.", count, 10 + first) + "\n    variants:\n";
    unsigned variants = 1 + b.next(cudas);
    for (unsigned v = 0; v < variants; ++v) y += "      - {cuda: \"12." + std::to_string(6 + v) + "\"}\n";
  }
  y += "packages:\n";
  unsigned packages = 1 + b.next(3);
  for (unsigned k = 0; k < packages; ++k) {
    y += "  pkg" + std::to_string(k) + ":\n    version: 1.0.0\n    kernels: kernels/families.json\n    abi: " +
         (b.next(2) ? "abi3" : "per-interpreter") + "\n    naming: local-version\n    archs: [\"8.0\"]\n";
    if (unsigned n = b.next(platforms + 1); n > 0) y += "    platforms: " + list("p", n) + "\n";
    if (unsigned t = b.next(torches); t > 0) y += "    min_torch: \"2." + std::to_string(t) + ".0\"\n";
  }
  if (unsigned excl = b.next(6); excl > 0) {
    y += "exclude:\n";
    for (unsigned e = 0; e < excl; ++e)
      y += "  - {pythons: [\"3." + std::to_string(10 + b.next(pythons)) + "\"], reason: fuzz}\n";
  }
  y += "profiles:\n  default: {torch: [\"2.0.0\"]}\n";
  try {
    sb::matrix::Matrix m = sb::matrix::parse_matrix(y, "fuzz-rows.yaml");
    if (m.rows.size() > sb::matrix::kMaxRows) sb::fuzz::broken("more rows than kMaxRows were made");
  } catch (const sb::ConfigError&) {
  }
  return 0;
}
