// The online softmax of the mma.sync families, in the exp2 domain, for one m16
// tile of a warp against one 64-key tile, and the packing of P into the A
// fragments of the P.V MMA.
//
// The dequantization scale c = q_scale * k_scale * sm_scale * log2(e) is
// applied inside the exp2's FFMA; the row max is taken on the integer scores
// scaled per thread (c differs between the threads of a quad: per-thread K
// scales; c > 0 and rounding is monotonic, so max(x)*c == max(x*c)).  c is
// clamped away from 0: a zero scale means zero int8 values, so acc == 0 there.
//
// Per P.V path (each measured faster on its path; BENCHMARKS.md):
// - fp8: biased conversion.  The s8 MMA accumulates onto the bit pattern of
//   1.5*2^23 (kAccInit), so each int32 result x reads as the float 1.5*2^23 + x
//   exactly (|x| <= 128*127*127 < 2^22): no int->float conversion per score;
//   the bias is subtracted in the exp2 FFMA (c*s - (c*bias + shift)) and
//   exactly from the row max.  P is produced directly in [0, 448] (x448 folded
//   into the exponent), the e4m3 range.
// - fp16: lazy rescale.  O and l are rescaled only when some row max of the
//   warp grew by more than cfg::kLazyLog2; otherwise the stale max is kept and
//   P <= 2^kLazyLog2 (exact in fp16, O/l/lse stay consistent).  Not for fp8 P,
//   which must stay <= 448.
#pragma once
#include "sageattn/ptx.cuh"
#include "sm80/tile.cuh"

namespace sa {
namespace sm80 {

template <bool PV_FP8>
struct ScoreBias {
  static constexpr bool kMagic = PV_FP8;
  static constexpr int32_t kAccInit = kMagic ? 0x4B400000 : 0;
  static constexpr float kBias = kMagic ? 12582912.0f : 0.f;
};

// One m16 tile (rows mrow + g, mrow + g + 8 of this thread) against key tile t:
// the scores acc -> P in pa; running max m and sum l; corr, the factor the
// previous O is rescaled by (fp16: applied here, to o, when the max moved).
template <int DP, bool CAUSAL, bool PV_FP8>
__device__ __forceinline__ void softmax_mtile(const int32_t (&acc)[Frags<DP>::NT][4], float c, int t, int kv_end,
                                              int mrow, int g, int tig, float (&m)[2], float (&l)[2],
                                              float (&o)[Frags<DP>::ON][4], float (&corr)[2],
                                              uint32_t (&pa)[PV_FP8 ? 2 : 4][4]) {
  constexpr int BK = cfg::kBlockK, NT = Frags<DP>::NT, ON = Frags<DP>::ON;
  float s[NT][4], mx[2], rmax[2], sh[2];
  constexpr bool kMagic = ScoreBias<PV_FP8>::kMagic;
  constexpr float kBias = ScoreBias<PV_FP8>::kBias;
  static_assert(DP * 127 * 127 < (1 << 22), "biased int32 -> float needs |x| < 2^22");
  constexpr bool kLazy = !PV_FP8;
  const int row0 = mrow + g;
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) s[j][e] = kMagic ? __int_as_float(acc[j][e]) : static_cast<float>(acc[j][e]);
  const bool need_mask = (t * BK + BK > kv_end) || (CAUSAL && t * BK + BK - 1 > mrow);
  if (need_mask) {
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = t * BK + j * 8 + tig * 2 + (e & 1);
        const int row = row0 + (e >> 1) * 8;
        if (key >= kv_end || (CAUSAL && key > row)) s[j][e] = -INFINITY;
      }
  }
  mx[0] = -INFINITY;
  mx[1] = -INFINITY;
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    mx[0] = fmaxf(mx[0], fmaxf(s[j][0], s[j][1]));
    mx[1] = fmaxf(mx[1], fmaxf(s[j][2], s[j][3]));
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float v = (kMagic ? mx[r] - kBias : mx[r]) * c;  // exact subtraction of the bias; -inf stays -inf
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
    rmax[r] = fmaxf(m[r], v);
  }
  bool rescale = true;
  if constexpr (kLazy)
    rescale = __any_sync(0xffffffffu, rmax[0] > m[0] + cfg::kLazyLog2 || rmax[1] > m[1] + cfg::kLazyLog2);
  if (rescale) {  // warp-uniform
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float mu = (rmax[r] == -INFINITY) ? 0.f : rmax[r];
      corr[r] = ptx::ex2_approx(m[r] - mu);
      m[r] = rmax[r];
    }
    if constexpr (kLazy) {
#pragma unroll
      for (int n = 0; n < ON; ++n) {
        o[n][0] *= corr[0];
        o[n][1] *= corr[0];
        o[n][2] *= corr[1];
        o[n][3] *= corr[1];
      }
      l[0] *= corr[0];
      l[1] *= corr[1];
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float mu = (m[r] == -INFINITY) ? 0.f : m[r];
    const float shift = PV_FP8 ? mu - cfg::kLog2Fp8Max : mu;
    sh[r] = kMagic ? fmaf(kBias, c, shift) : shift;
  }
  float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    s[j][0] = ptx::ex2_approx(fmaf(s[j][0], c, -sh[0]));
    s[j][1] = ptx::ex2_approx(fmaf(s[j][1], c, -sh[0]));
    s[j][2] = ptx::ex2_approx(fmaf(s[j][2], c, -sh[1]));
    s[j][3] = ptx::ex2_approx(fmaf(s[j][3], c, -sh[1]));
    rs0 += s[j][0] + s[j][1];
    rs1 += s[j][2] + s[j][3];
  }
  if constexpr (kLazy) {
    l[0] += rs0;
    l[1] += rs1;
  } else {
    l[0] = l[0] * corr[0] + rs0;
    l[1] = l[1] * corr[1] + rs1;
  }
  if constexpr (!PV_FP8) {
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      pa[kk][0] = ptx::pack_f16x2(s[2 * kk][0], s[2 * kk][1]);
      pa[kk][1] = ptx::pack_f16x2(s[2 * kk][2], s[2 * kk][3]);
      pa[kk][2] = ptx::pack_f16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pa[kk][3] = ptx::pack_f16x2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
  } else {
    // logical k position 4*tig+i of each 16-key group holds key perm(4*tig+i)
    // (V^T is stored permuted the same way by the V quantization kernel)
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
      pa[kk][0] = ptx::pack_e4m3x4(s[4 * kk][0], s[4 * kk][1], s[4 * kk + 1][0], s[4 * kk + 1][1]);
      pa[kk][1] = ptx::pack_e4m3x4(s[4 * kk][2], s[4 * kk][3], s[4 * kk + 1][2], s[4 * kk + 1][3]);
      pa[kk][2] = ptx::pack_e4m3x4(s[4 * kk + 2][0], s[4 * kk + 2][1], s[4 * kk + 3][0], s[4 * kk + 3][1]);
      pa[kk][3] = ptx::pack_e4m3x4(s[4 * kk + 2][2], s[4 * kk + 2][3], s[4 * kk + 3][2], s[4 * kk + 3][3]);
    }
  }
}

}  // namespace sm80
}  // namespace sa
