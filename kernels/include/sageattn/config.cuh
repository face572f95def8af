// Compile-time tile parameters: the ONE place they are set.
#pragma once
#include "sageattn/sageattn.h"

namespace sa {
namespace cfg {
constexpr int kWarps = 8;                    // warps per attention CTA
constexpr int kThreads = kWarps * 32;        // 256
constexpr int kRowsPerWarp = 16;             // one m16 slice per warp
constexpr int kBlockQ = SA_BLOCK_Q;          // 128 query rows per CTA
constexpr int kBlockK = SA_BLOCK_K;          // 64 keys per tile
constexpr int kStagesFp16 = 2;               // cp.async ring depth, PV fp16 path
constexpr int kStagesFp8 = 3;                // cp.async ring depth, PV fp8 path
constexpr int kSmemPad = 16;                 // bytes of padding per smem row (bank spread for ldmatrix)
constexpr int kQuantThreads = 256;
constexpr int kStatRows = 128;               // rows per CTA in sa_channel_stats
constexpr float kFp8Max = 448.0f;            // e4m3 max finite
constexpr float kLog2Fp8Max = 8.807354922057604f;  // log2(448)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
static_assert(kBlockQ == kWarps * kRowsPerWarp, "each warp owns 16 query rows");
static_assert(kBlockK == 64, "the fp8 P packing assumes 64-key tiles (2 k32 steps)");
}  // namespace cfg
}  // namespace sa
