// Every compile-time parameter of the kernels, for all families: the ONE place
// they are set.  The shipped values are the defaults below; the SA_* / SA90_*
// macros override the tile shapes for tuning runs only (the kernel benchmark
// passes them to nvcc).  Code paths measured slower are not switches here: they
// were deleted, and their figures are in BENCHMARKS.md's history.
#pragma once
#include "route_table.h"
#include "sageattn/sageattn.h"

// ---- mma.sync families (pv_fp16, pv_fp8; src/sm80/)
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

// ---- sm90 family (wgmma; src/sm90/)
#ifndef SA90_BN
#define SA90_BN 128  // keys per stage
#endif
#ifndef SA90_STAGES_FP8
#define SA90_STAGES_FP8 5
#endif
#ifndef SA90_STAGES_FP16
#define SA90_STAGES_FP16 4
#endif
#ifndef SA90_CONSUMER_REGS
#define SA90_CONSUMER_REGS 240
#endif
#ifndef SA90_PRODUCER_REGS
#define SA90_PRODUCER_REGS 24
#endif
// Head dim 64: the split that spills nowhere (the 24 above spill the producer's loop, 36-60 bytes a
// thread, at every head dim); at 128 the consumers' 232 spill and measured 2-4 % slower (BENCHMARKS.md).
#ifndef SA90_CONSUMER_REGS_D64
#define SA90_CONSUMER_REGS_D64 232
#endif
#ifndef SA90_PRODUCER_REGS_D64
#define SA90_PRODUCER_REGS_D64 40
#endif

namespace sa {
namespace cfg {
// Shared by every family: the quantized tensors' padding and scale groups (sageattn.h).
constexpr int kBlockQ = SA_BLOCK_Q;  // 128: Q padding and the per-block Q quantization group
constexpr int kBlockK = SA_BLOCK_K;  // 64 keys per tile (K padding, K scale group)
constexpr int kQuantThreads = 256;
constexpr int kStatRows = 512;                     // rows per CTA of the channel statistics (sa_quant_qkv)
constexpr float kFp8Max = 448.0f;                  // e4m3 max finite
constexpr float kLog2Fp8Max = 8.807354922057604f;  // log2(448)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// mma.sync families
constexpr int kWarps = SA_ATTN_WARPS;  // warps per attention CTA
constexpr int kThreads = kWarps * 32;
constexpr int kWarpMTiles = SA_WARP_MTILES;  // m16 slices per warp
#ifdef SA_MIN_BLOCKS
constexpr int kMinBlocksPerSm = SA_MIN_BLOCKS;  // register cap = 64K / (kThreads * this)
#else
constexpr int kMinBlocksPerSm = kWarps * SA_WARP_MTILES >= 8 ? 1 : 2;
#endif
constexpr int kStagesFp16 = SA_STAGES_FP16;  // cp.async ring depth, PV fp16 path
constexpr int kStagesFp8 = SA_STAGES_FP8;    // cp.async ring depth, PV fp8 path
constexpr int kSmemPad = 16;                 // bytes of padding per smem row (bank spread for ldmatrix)
// fp16 P.V: O and l are rescaled only when some row max of the warp grew by
// more than this (exp2 domain); P <= 2^8 is exact in fp16.
constexpr float kLazyLog2 = 8.f;
static_assert(kBlockK == 64, "the fp8 P packing assumes 64-key tiles (2 k32 steps)");

// sm90 family
namespace sm90 {
constexpr int kBN = SA90_BN;  // keys per ring stage
constexpr int kStagesFp8 = SA90_STAGES_FP8;
constexpr int kStagesFp16 = SA90_STAGES_FP16;
// setmaxnreg of the consumer warpgroups and of the producer warpgroup, per padded head dim
constexpr int consumer_regs(int dp) { return dp == 64 ? SA90_CONSUMER_REGS_D64 : SA90_CONSUMER_REGS; }
constexpr int producer_regs(int dp) { return dp == 64 ? SA90_PRODUCER_REGS_D64 : SA90_PRODUCER_REGS; }
// The largest (padded) head dim of the fp8 P.V: the routing table's
// (route_table.h, which says why); the instances attn_sm90.cu compiles.
constexpr int kFp8MaxHeadDim = route::max_head_dim(SA_KERNEL_SM90_PV_FP8);
static_assert(kFp8MaxHeadDim == 64 || kFp8MaxHeadDim == 128 || kFp8MaxHeadDim == 192 || kFp8MaxHeadDim == 256,
              "the routing table's sm90 fp8 bound is a padded head dim (sa_padded_head_dim)");
}  // namespace sm90
}  // namespace cfg
}  // namespace sa
