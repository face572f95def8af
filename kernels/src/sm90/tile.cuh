// The sm90 family's shapes and shared-memory layout (from the parameters in
// src/config.cuh), kernel parameters and tile scheduler.
//
// A CTA is three warpgroups: warpgroup 0 produces (one thread issues the TMA
// copies of Q, K, V and the K scales into a ring of shared-memory stages
// guarded by mbarriers), warpgroups 1 and 2 consume (each owns 64 of the CTA's
// 128 query rows and runs Q.K^T, the online softmax and P.V on the tensor
// cores).  The grid is persistent: one CTA per SM walks a static list of
// (batch, head, query tile) work tiles.
#pragma once
#include <cuda.h>  // CUtensorMap (a plain 128-byte struct; no driver call here)
#include "attn_args.cuh"
#include "config.cuh"

namespace sa {
namespace sm90 {

constexpr int kConsumers = 2;                     // consumer warpgroups
constexpr int kThreads = 128 * (1 + kConsumers);  // + the producer warpgroup
constexpr int kRows = 64 * kConsumers;            // query rows per CTA
constexpr int kConsumerThreads = 128 * kConsumers;
static_assert(kRows == cfg::kBlockQ, "a CTA covers one Q padding / Q scale block");
// setmaxnreg moves registers between the warpgroups of the CTA, within what the
// launch gave it (kThreads x 168: 65536 / 384, rounded down to a multiple of 8):
// an increase that the decreases do not cover waits forever.
constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;

// Shapes and shared memory of one (padded head dim, P.V path) instance.
// Q and K rows (int8, DP bytes) are stored as column panels of kPanel bytes,
// each its own swizzled tile (a TMA box and a wgmma operand span at most one
// 128-byte swizzle row): one panel at DP = 64 or 128, two of 128 bytes at 256,
// three of 64 at 192.
constexpr int panel_bytes(int dp) { return dp % 128 == 0 ? 128 : 64; }

// QIN: the kernel quantizes Q itself (fp8 P.V, padded head dims up to 128):
// the producer copies the caller's 16-bit Q into a staging slot and the
// consumers write its INT8 rows into the Q tile (sm90/consumer.cuh).
template <int DP, bool PV_FP8, bool QIN = false>
struct Tile {
  static_assert(DP <= cfg::sm90::kFp8MaxHeadDim || !PV_FP8, "the fp8 P.V's head dims (config.cuh)");
  static_assert(!QIN || (PV_FP8 && DP <= 128), "Q quantized in the kernel: the fp8 P.V up to head dim 128");
  static_assert(128 * (kLaunchRegs - cfg::sm90::producer_regs(DP)) >=
                    kConsumerThreads * (cfg::sm90::consumer_regs(DP) - kLaunchRegs),
                "the consumers' registers must come from the producer's");
  // Above DP = 128, 64-key stages: O alone takes DP / 2 = 128 registers.
  static constexpr int kBN = DP > 128 ? 64 : cfg::sm90::kBN;
  static constexpr int kSub = kBN / 64;  // 64-key K-scale groups per stage
  static constexpr int kStages = PV_FP8      ? cfg::sm90::kStagesFp8
                                 : DP == 256 ? 3
                                 : DP == 192 ? 4
                                             : cfg::sm90::kStagesFp16;
  static_assert(kBN == 64 || kBN == 128, "64- or 128-key stages (K is padded to 64 keys)");
  // Q and K: int8 rows of DP bytes in kPanel-byte panels, kPanel-byte swizzle.
  // V: fp8 path, e4m3 V^T rows of kBN bytes (one swizzle row: 128 keys or 64);
  // fp16 path, the user's V as DP/64 sub-tiles of [kBN keys][64 dims]
  // (128-byte rows), read MN-major.
  static constexpr int kPanel = panel_bytes(DP);
  static constexpr int kPanels = DP / kPanel;
  static constexpr int kQPanelBytes = kRows * kPanel;  // Q panel p at p * kQPanelBytes
  static constexpr int kKPanelBytes = kBN * kPanel;    // K panel p at p * kKPanelBytes
  static constexpr int kQBytes = kRows * DP;
  static constexpr int kKBytes = kBN * DP;
  static constexpr int kVBytes = PV_FP8 ? DP * kBN : kBN * DP * 2;
  static constexpr int kVSubBytes = kBN * 128;                   // fp16 path: one 64-dim sub-tile
  static constexpr int kVRow = kBN;                              // fp8 path: bytes per V^T row
  static constexpr int kKsBytes = kSub * 16;                     // the stage's K scales: 4 floats per 64 keys
  static constexpr int kTxBytes = kKBytes + kVBytes + kKsBytes;  // what the TMA copies of a stage land
  // fp8 path: under each stage's V^T, one more 8-row group
  // (1 KiB, written once) whose first row is ones: the P.V MMA then also yields
  // P's row sums (N = DP + 8), and the softmax adds none.
  static constexpr bool kRowSumMma = PV_FP8;
  static constexpr int kVStride = kVBytes + (kRowSumMma ? 1024 : 0);  // bytes between stages' V buffers
  static constexpr int kAccN = DP / 2 + (kRowSumMma ? 4 : 0);         // P.V accumulators per thread
  // Two Q slots: the next work tile's Q lands while the current one still runs.
  // QIN: one staging slot of the caller's Q (DP/64 sub-tiles of [kRows][64]
  // 16-bit elements, 128-byte rows, 128-byte swizzle), released as soon as the
  // consumers have quantized it, and one INT8 Q tile that they write.
  static constexpr int kQSlots = QIN ? 1 : 2;
  static constexpr int kQInBytes = QIN ? kRows * DP * 2 : 0;  // one staging slot
  static constexpr int kQInSubBytes = kRows * 128;            // one 64-element sub-tile of it
  // Layout (offsets from a 1 KiB-aligned base):
  // Q[2] | K[stages] | V[stages] | Ks[stages] | Vs | Qmax | barriers, QIN: Q | staging | K ...
  static constexpr int kOffQ = 0;
  static constexpr int kOffQIn = kOffQ + (QIN ? 1 : kQSlots) * kQBytes;
  static constexpr int kOffK = kOffQIn + kQSlots * kQInBytes;
  static constexpr int kOffV = kOffK + kStages * kKBytes;
  static constexpr int kOffKs = kOffV + kStages * kVStride;
  // fp8 path: each consumer warpgroup's copy of the work tile's V scale and mean
  // (2 x DP floats), fetched when the tile starts, read by its epilogue.
  static constexpr int kVsBytes = PV_FP8 ? kConsumers * 2 * DP * 4 : 0;
  static constexpr int kOffVs = kOffKs + kStages * 128;  // K-scale slots 128-byte aligned (TMA)
  // QIN with one Q scale per 128 rows: the consumer warps' maxima.
  static constexpr int kQmaxBytes = QIN ? kConsumers * 4 * 4 : 0;  // a float per warp
  static constexpr int kOffQmax = kOffVs + kVsBytes;
  static constexpr int kOffBar = kOffQmax + kQmaxBytes;
  // barriers: full[stages], empty[stages], q_full[2], q_empty[2]
  static constexpr int kBarBytes = (2 * kStages + 2 * kQSlots) * 8;
  static constexpr int kTotal = kOffBar + kBarBytes + 1024;  // + alignment slack
  static_assert(kQBytes % 1024 == 0 && kKBytes % 1024 == 0 && kVBytes % 1024 == 0, "1 KiB-aligned tiles");
  static_assert(kKsBytes <= 128, "K scales of a stage fit their slot");
  static_assert(kTotal <= 227 * 1024, "shared memory per CTA");
};

// Kernel parameters: the C ABI's, and the tensor maps (built on the host per
// call; __grid_constant__ keeps them in parameter space, where TMA reads them).
struct Params {
  CUtensorMap tm_q;   // q_int8   [B*Hq][q_pad][DP]   box [1][128][kPanel]
  CUtensorMap tm_k;   // k_int8   [B*Hk][k_pad][DP]   box [1][kBN][kPanel]
  CUtensorMap tm_v;   // fp8: v_fp8 [B*Hk][DP][k_pad] box [1][DP][kBN]; fp16: V [B][Hk][N][D] box [1][1][kBN][64]
  CUtensorMap tm_ks;  // k_scale  [B*Hk][k_pad/64][4] box [1][kSub][4]
  CUtensorMap tm_qf;  // QIN: the caller's Q [B][Hq][Nq][D] 16-bit      box [1][1][128][64]
  AttnArgs a;
  int n_qt;     // query tiles per (batch, head)
  int total;    // work tiles
  int pairs;    // causal schedule (see work_slot / decode_work)
  int out_vec;  // the output takes 16-byte stores (aligned base and strides)
};

// The static schedule: slot w names a work tile, query tiles varying fastest
// so that the CTAs running at one time share a few heads' K and V in L2.
// Non-causal: round i of CTA c takes slot i*G + c (G CTAs).  Causal
// (`pairs`): a head's query tiles are taken as pairs of a long and a short one
// (tiles n-1 and 0, n-2 and 1, ...: n+1 key tiles per pair), and a CTA takes
// both tiles of a pair in two consecutive rounds, so every CTA gets the same
// work without giving up the L2 order (a longest-first order over all heads
// measured L2 hit rates of 41 % at 2k).
struct Work {
  int b, h, qt;
};
__device__ __forceinline__ int work_slot(const Params& prm, int round) {
  if (prm.pairs) return 2 * ((round >> 1) * (int)gridDim.x + (int)blockIdx.x) + (round & 1);
  return round * (int)gridDim.x + (int)blockIdx.x;
}
template <bool CAUSAL>
__device__ __forceinline__ Work decode_work(const Params& prm, int w) {
  const int heads = prm.a.p.q_heads;
  const int r = w % prm.n_qt, bh = w / prm.n_qt;
  Work k;
  k.h = bh % heads;
  k.b = bh / heads;
  // causal: even r the long tile of pair r/2, odd r its short partner
  k.qt = !CAUSAL ? r : (r & 1) ? r >> 1 : prm.n_qt - 1 - (r >> 1);
  return k;
}

// What a work tile covers of its batch element's sequences (sageattn.h:
// per-batch query / key lengths).  The producer and the consumers decide the
// same way: a tile past the queries is skipped; a tile with no key loads
// nothing and writes zeros.
struct Span {
  int q_len;    // valid query rows of the batch element
  int kv_len;   // valid keys
  int n_tiles;  // key tiles to visit (causal: none past the tile's last row)
  __device__ __forceinline__ bool skipped(int qt) const { return qt * kRows >= q_len; }
  __device__ __forceinline__ bool loads() const { return n_tiles > 0; }
};
template <int kBN, bool CAUSAL>
__device__ __forceinline__ Span work_span(const sa_attn_params& p, const Work& wk) {
  Span s;
  s.q_len = batch_len(p.q_seq_len, wk.b, p.q_len);
  s.kv_len = batch_len(p.kv_seq_len, wk.b, p.kv_len);
  int n = (s.kv_len + kBN - 1) / kBN;
  if (CAUSAL && !s.skipped(wk.qt)) n = min(n, (min((wk.qt + 1) * kRows, s.q_len) - 1) / kBN + 1);
  s.n_tiles = n;
  return s;
}

}  // namespace sm90
}  // namespace sa
