// Shapes and shared memory of the mma.sync families (pv_fp16 sm80+, pv_fp8
// sm89+).  A CTA is cfg::kWarps warps of cfg::kRowsPerWarp query rows each
// (cfg::kWarpMTiles m16 tiles per warp, so every K / V fragment feeds that
// many MMAs) of one (batch, head); keys stream through a cp.async ring of
// 64-key stages, each a K tile (int8 rows) and a V tile.
#pragma once
#include "attn_args.cuh"

namespace sa {
namespace sm80 {

// One (padded head dim, P.V path) instance's ring stage.
// Rows are padded by cfg::kSmemPad bytes (ldmatrix bank spread), except the
// fp16 V tile at DP = 256: padded, two stages of it would pass the 99 KiB an
// sm_86 / 89 / 120 CTA may use, so its 512-byte rows are stored unpadded with
// their 16-byte chunks swizzled instead (chunk c of row r at c ^ (r & 7)).
template <int DP, bool PV_FP8>
struct Smem {
  static constexpr int kKStride = DP + cfg::kSmemPad;  // bytes per key row (int8)
  static constexpr int kKBytes = cfg::kBlockK * kKStride;
  static constexpr bool kVSwizzle = !PV_FP8 && DP == 256;
  // fp16 V: [key][dim] halves; fp8 V^T: [dim][key] bytes
  static constexpr int kVStride = PV_FP8 ? (cfg::kBlockK + cfg::kSmemPad) : (DP * 2 + (kVSwizzle ? 0 : cfg::kSmemPad));
  static constexpr int kVBytes = PV_FP8 ? DP * kVStride : cfg::kBlockK * kVStride;
  // fp8 at DP = 256: two stages (three would pass 99 KiB).
  static constexpr int kStages = PV_FP8 ? (DP == 256 ? 2 : cfg::kStagesFp8) : cfg::kStagesFp16;
  static constexpr int kStageBytes = kKBytes + kVBytes;
  static constexpr int kTotal = kStages * kStageBytes;
  static_assert(kKStride % 16 == 0 && kVStride % 16 == 0 && kKBytes % 16 == 0, "16-byte aligned rows");
  static_assert(kTotal <= 99 * 1024, "the ring fits the shared memory of every mma.sync arch (sm_86/89/120: 99 KiB)");
  // Byte offset of 16-byte chunk c of fp16 V row r.
  __device__ __forceinline__ static int v_chunk(int r, int c) {
    return r * kVStride + (kVSwizzle ? (c ^ (r & 7)) : c) * 16;
  }
};

// Fragment counts of one warp per key tile, and the rows of a warp and a CTA.
// Above DP = 128 a warp takes one m16 tile: two would hold 2 x DP / 2 fp32
// accumulators of O per thread, past the register file's 255.
template <int DP>
struct Frags {
  static constexpr int KS = DP / 32;                           // k32 steps over the head dim (Q.K^T)
  static constexpr int NT = cfg::kBlockK / 8;                  // n8 tiles of S per key tile
  static constexpr int ON = DP / 8;                            // n8 tiles of O
  static constexpr int MT = DP > 128 ? 1 : cfg::kWarpMTiles;   // m16 tiles per warp
  static constexpr int kRowsPerWarp = 16 * MT;                 // query rows per warp
  static constexpr int kCtaRows = cfg::kWarps * kRowsPerWarp;  // query rows per CTA
  static_assert(cfg::kBlockQ % kCtaRows == 0, "attention CTAs tile the padded Q exactly");
};

// Scratch: the pieces (softmax_mtile, mma_pv_fp8, store_output) take their
// small working arrays from the caller, declared in attn_body where the single
// function this code was declared them.  nvcc places a forced-inline callee's
// local arrays ahead of the caller's, and that reorders register allocation:
// the same pieces with arrays of their own compile to different SASS (sm_86:
// a larger stack frame).  Declared by the caller, the kernels' device code is
// the code that was measured (scripts/kernels-sass-diff.sh checks it).

}  // namespace sm80
}  // namespace sa
