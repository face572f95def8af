// Compile-time tile parameters: the ONE place they are set.
#pragma once
#include "sageattn/sageattn.h"

// Overridable with -D for tuning experiments (kernels/dev/attn_bench.cu);
// the shipped values are the defaults below.
#ifndef SA_ATTN_WARPS
#define SA_ATTN_WARPS 4
#endif
#ifndef SA_WARP_MTILES
#define SA_WARP_MTILES 2  // m16 tiles (16 query rows each) per warp
#endif
#ifndef SA_STAGES_FP16
#define SA_STAGES_FP16 2
#endif
#ifndef SA_STAGES_FP8
#define SA_STAGES_FP8 3
#endif

namespace sa {
namespace cfg {
constexpr int kWarps = SA_ATTN_WARPS;  // warps per attention CTA
constexpr int kThreads = kWarps * 32;
constexpr int kWarpMTiles = SA_WARP_MTILES;  // m16 slices per warp
constexpr int kRowsPerWarp = 16 * kWarpMTiles;
constexpr int kCtaRows = kWarps * kRowsPerWarp;  // query rows per attention CTA
#ifdef SA_MIN_BLOCKS
constexpr int kMinBlocksPerSm = SA_MIN_BLOCKS;  // register cap = 64K / (kThreads * this)
#else
constexpr int kMinBlocksPerSm = kWarps * SA_WARP_MTILES >= 8 ? 1 : 2;
#endif
constexpr int kBlockQ = SA_BLOCK_Q;          // 128: Q padding and the per-block Q quantization group
constexpr int kBlockK = SA_BLOCK_K;          // 64 keys per tile
constexpr int kStagesFp16 = SA_STAGES_FP16;  // cp.async ring depth, PV fp16 path
constexpr int kStagesFp8 = SA_STAGES_FP8;    // cp.async ring depth, PV fp8 path
constexpr int kSmemPad = 16;                 // bytes of padding per smem row (bank spread for ldmatrix)
constexpr int kQuantThreads = 256;
constexpr int kStatRows = 512;                     // rows per CTA in sa_channel_stats
constexpr float kFp8Max = 448.0f;                  // e4m3 max finite
constexpr float kLog2Fp8Max = 8.807354922057604f;  // log2(448)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
static_assert(kBlockQ % kCtaRows == 0, "attention CTAs tile the padded Q exactly");
static_assert(kBlockK == 64, "the fp8 P packing assumes 64-key tiles (2 k32 steps)");
}  // namespace cfg
}  // namespace sa
