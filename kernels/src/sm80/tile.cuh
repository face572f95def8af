// Shapes and shared memory of the mma.sync families (pv_fp16 sm80+, pv_fp8
// sm89+).  A CTA is cfg::kWarps warps of cfg::kRowsPerWarp query rows each
// (cfg::kWarpMTiles m16 tiles per warp, so every K / V fragment feeds that
// many MMAs) of one (batch, head); keys stream through a cp.async ring of
// 64-key stages, each a K tile (int8 rows) and a V tile.
#pragma once
#include "attn_args.cuh"

namespace sa {
namespace sm80 {

// One (padded head dim, P.V path) instance's ring stage: a K tile (int8 rows
// of DP bytes), then a V tile (fp16 rows of 2 * DP bytes, or the e4m3 V^T:
// DP rows of 64 keys).  ldmatrix reads 8 rows at one 16-byte chunk column, so
// rows whose stride is a multiple of 128 bytes would hit one bank group 8
// times.  Rows are therefore swizzled where their width allows it (no padding,
// every byte used), else padded by cfg::kSmemPad bytes:
//   rows of 8k chunks (K at DP = 128 / 256, every fp16 V): chunk c of row r
//     at c ^ (r & 7);
//   rows of 4 chunks (K at DP = 64, every V^T): chunk c of row r at
//     c ^ ((r >> 1) & 3) (two rows share a 128-byte line);
//   K at DP = 192 (12 chunks a row): padded.
// Swizzled, the head-dim-128 rings are 48 KiB, so two CTAs share the 100 KiB
// of an sm_86 / 89 / 120 SM (padded they were 52 and 57 KiB: one CTA a SM).
// ldmatrix's rows r..r+7 start at a multiple of 8, so a lane's swizzle term
// (r & 7, or (r >> 1) & 3) is fixed by its lane id.
template <int DP, bool PV_FP8>
struct Smem {
  static constexpr int kKChunks = DP / 16;                                     // 16-byte chunks a K row
  static constexpr int kKSwz = kKChunks % 8 == 0 ? 8 : kKChunks == 4 ? 4 : 0;  // 0: padded
  static constexpr int kKStride = DP + (kKSwz ? 0 : cfg::kSmemPad);            // bytes a key row (int8)
  static constexpr int kKBytes = cfg::kBlockK * kKStride;
  // fp16 V: [key][dim] halves, 2 * DP bytes a row (DP / 8 chunks: 8k); fp8 V^T: [dim][key] bytes, 4 chunks a row
  static constexpr int kVStride = PV_FP8 ? cfg::kBlockK : DP * 2;
  static constexpr int kVBytes = PV_FP8 ? DP * kVStride : cfg::kBlockK * kVStride;
  // fp8 at DP = 256: two stages (three would pass 99 KiB).
  static constexpr int kStages = PV_FP8 ? (DP == 256 ? 2 : cfg::kStagesFp8) : cfg::kStagesFp16;
  static constexpr int kStageBytes = kKBytes + kVBytes;
  static constexpr int kTotal = kStages * kStageBytes;
  static_assert((DP * 2 / 16) % 8 == 0 && cfg::kBlockK / 16 == 4, "V rows: 8k chunks (fp16), 4 chunks (V^T)");
  static_assert(kKStride % 16 == 0 && kKBytes % 128 == 0, "16-byte chunks, 128-byte aligned tiles");
  static_assert(kTotal <= 99 * 1024, "the ring fits the shared memory of every mma.sync arch (sm_86/89/120: 99 KiB)");

  static constexpr int kVSwz = PV_FP8 ? 4 : 8;

  // Byte offset of 16-byte chunk c of row r in a tile of the given swizzle
  // (8, 4, or 0: padded) and row stride.
  template <int SWZ, int STRIDE>
  __device__ __forceinline__ static int chunk(int r, int c) {
    if constexpr (SWZ == 8)
      return r * STRIDE + ((c ^ (r & 7)) << 4);
    else if constexpr (SWZ == 4)
      return r * STRIDE + ((c ^ ((r >> 1) & 3)) << 4);
    else
      return r * STRIDE + c * 16;
  }
  __device__ __forceinline__ static int k_chunk(int r, int c) { return chunk<kKSwz, kKStride>(r, c); }
  __device__ __forceinline__ static int v_chunk(int r, int c) { return chunk<kVSwz, kVStride>(r, c); }

  // ldmatrix addressing.  Lane l reads row r0 + rl at chunk c0 + cb, where
  // r0 (a multiple of 8) and c0 (even) are the unrolled loops' constants and
  // rl (< 16), cb (0 or 1) the lane's own.  The swizzle term depends on rl
  // alone, so the offset is the lane's base (k_lane / v_lane: chunk cb of row rl) with
  // c0's bits below the swizzle width XORed in (they meet only the swizzle
  // bits: r0 * STRIDE and the base's row part have none there) and the rest
  // of r0 and c0 added: a constant XOR and add per load, no index arithmetic.
  template <int SWZ, int STRIDE>
  __device__ __forceinline__ static int at(int base, int r0, int c0) {
    if constexpr (SWZ == 0)
      return base + r0 * STRIDE + c0 * 16;
    else
      return (base ^ ((c0 & (SWZ - 1)) << 4)) + r0 * STRIDE + ((c0 & ~(SWZ - 1)) << 4);
  }
  __device__ __forceinline__ static int k_lane(int rl, int cb) { return chunk<kKSwz, kKStride>(rl, cb); }
  __device__ __forceinline__ static int k_at(int base, int r0, int c0) { return at<kKSwz, kKStride>(base, r0, c0); }
  __device__ __forceinline__ static int v_lane(int rl, int cb) { return chunk<kVSwz, kVStride>(rl, cb); }
  __device__ __forceinline__ static int v_at(int base, int r0, int c0) { return at<kVSwz, kVStride>(base, r0, c0); }
  static_assert(kKStride % (kKSwz == 0 ? 16 : kKSwz * 16) == 0, "swizzled K rows: whole swizzle groups");
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

}  // namespace sm80
}  // namespace sa
