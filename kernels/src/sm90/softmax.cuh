// The online softmax of the sm90 family, for one thread's share of a
// warpgroup's 64 x kBN score tile.
//
// Accumulator layout of wgmma m64nN (per warp the m16n8 C layout): thread
// (g = lane/4, tig = lane%4) of warp w holds, for every n8 column chunk j,
// s[4j+0..1] = row 16w+g, columns 8j+2tig, +1 and s[4j+2..3] = row 16w+g+8.
// Both rows' running max m, sum l are kept per thread (reduced across the quad
// once per tile for m, once at the end for l).
//
// Scores are dequantized inside the exp2: s_int * (q_scale * k_scale * sm_scale
// * log2 e) - m, with the K scale per 64-key group and per-thread class tig
// (sageattn.h's k_scale layout).  The fp8 path shifts the exponent by log2(448)
// so P lands in [0, 448], the e4m3 range (the factor cancels in O / l).
#pragma once
#include "sageattn/ptx.cuh"
#include "sm90/tile.cuh"

namespace sa {
namespace sm90 {

template <int kBN, bool PV_FP8, bool ROWSUM_MMA = false>
struct OnlineSoftmax {
  static constexpr int kSub = kBN / 64;
  static constexpr int NJ = kBN / 8;  // n8 column chunks of the tile
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.f, 0.f};

  // s: the tile's scores (int32 converted to float), masked here when MASK,
  // turned into P in place.  c: dequantization factor per 64-key group.
  // corr: the factor by which the rows' earlier O and l must be scaled.  With
  // ROWSUM_MMA the row sums come from the P.V MMA: l is updated when it is folded.
  // `between` runs after the row maxima and before the exponentials: work that
  // does not depend on this tile's P placed there can interleave with the MUFU ops.
  template <bool MASK, bool CAUSAL, typename Between>
  __device__ __forceinline__ void step(float (&s)[kBN / 2], const float (&c)[kSub], int key0, int kv_len, int row0,
                                       int tig, float (&corr)[2], Between&& between) {
    if constexpr (MASK) {
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = key0 + j * 8 + tig * 2 + (e & 1);
          const int row = row0 + (e >> 1) * 8;
          if (key >= kv_len || (CAUSAL && key > row)) s[4 * j + e] = -INFINITY;
        }
    }
    // Row maxima per 64-key group (one chain per row: measured faster than
    // trees, which cost registers).
    float mx[kSub][2];
#pragma unroll
    for (int hh = 0; hh < kSub; ++hh) {
      mx[hh][0] = mx[hh][1] = -INFINITY;
#pragma unroll
      for (int j = hh * 8; j < hh * 8 + 8; ++j) {
        mx[hh][0] = fmaxf(mx[hh][0], fmaxf(s[4 * j], s[4 * j + 1]));
        mx[hh][1] = fmaxf(mx[hh][1], fmaxf(s[4 * j + 2], s[4 * j + 3]));
      }
    }
    float sh[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float v = mx[0][r] * c[0];
      if constexpr (kSub == 2) v = fmaxf(v, mx[1][r] * c[1]);
      v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
      v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
      const float mnew = fmaxf(m[r], v);
      const float mu = (mnew == -INFINITY) ? 0.f : mnew;
      corr[r] = ptx::ex2_approx(m[r] - mu);
      m[r] = mnew;
      sh[r] = PV_FP8 ? mu - cfg::kLog2Fp8Max : mu;
    }
    between();
    float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      const float cj = c[j / 8];
      s[4 * j + 0] = ptx::ex2_approx(fmaf(s[4 * j + 0], cj, -sh[0]));
      s[4 * j + 1] = ptx::ex2_approx(fmaf(s[4 * j + 1], cj, -sh[0]));
      s[4 * j + 2] = ptx::ex2_approx(fmaf(s[4 * j + 2], cj, -sh[1]));
      s[4 * j + 3] = ptx::ex2_approx(fmaf(s[4 * j + 3], cj, -sh[1]));
      if constexpr (!ROWSUM_MMA) {
        rs0 += s[4 * j + 0] + s[4 * j + 1];
        rs1 += s[4 * j + 2] + s[4 * j + 3];
      }
    }
    if constexpr (!ROWSUM_MMA) {
      l[0] = l[0] * corr[0] + rs0;
      l[1] = l[1] * corr[1] + rs1;
    }
  }

  // The quad's row sums (once, before the epilogue).
  __device__ __forceinline__ void finish() {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    }
  }
};

// P as the register A operand of the P.V wgmma, one [4] word group per k-step.
// fp8 (k32 steps): per warp the m16n8k32 A layout, where logical k position
// 4*tig+i of each 16-key group holds key sa_v_key_perm(4*tig+i) (V^T's keys are
// stored in that order by sa_quant_qkv).  fp16 (k16 steps): the m16n8k16 A
// layout, no permutation.
template <int kBN, bool PV_FP8>
struct PFragment {
  static constexpr int kSteps = PV_FP8 ? kBN / 32 : kBN / 16;
  uint32_t a[kSteps][4];

  __device__ __forceinline__ void pack(const float (&s)[kBN / 2]) {
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      if constexpr (PV_FP8) {
        const int j0 = 4 * kk;
        a[kk][0] = ptx::pack_e4m3x4(s[4 * j0 + 0], s[4 * j0 + 1], s[4 * (j0 + 1) + 0], s[4 * (j0 + 1) + 1]);
        a[kk][1] = ptx::pack_e4m3x4(s[4 * j0 + 2], s[4 * j0 + 3], s[4 * (j0 + 1) + 2], s[4 * (j0 + 1) + 3]);
        a[kk][2] = ptx::pack_e4m3x4(s[4 * (j0 + 2) + 0], s[4 * (j0 + 2) + 1], s[4 * (j0 + 3) + 0], s[4 * (j0 + 3) + 1]);
        a[kk][3] = ptx::pack_e4m3x4(s[4 * (j0 + 2) + 2], s[4 * (j0 + 2) + 3], s[4 * (j0 + 3) + 2], s[4 * (j0 + 3) + 3]);
      } else {
        const int j0 = 2 * kk;
        a[kk][0] = ptx::pack_f16x2(s[4 * j0 + 0], s[4 * j0 + 1]);
        a[kk][1] = ptx::pack_f16x2(s[4 * j0 + 2], s[4 * j0 + 3]);
        a[kk][2] = ptx::pack_f16x2(s[4 * (j0 + 1) + 0], s[4 * (j0 + 1) + 1]);
        a[kk][3] = ptx::pack_f16x2(s[4 * (j0 + 1) + 2], s[4 * (j0 + 1) + 3]);
      }
    }
  }
};

}  // namespace sm90
}  // namespace sa
