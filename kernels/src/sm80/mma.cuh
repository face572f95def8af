// The two GEMMs of the mma.sync families for one warp's cfg::kWarpMTiles m16
// tiles against one 64-key tile in shared memory; every B fragment loaded with
// ldmatrix feeds all of the warp's m16 tiles.
//   S  = Q K^T   m16n8k32 s8, int32 accumulators
//   O += P V     fp16: m16n8k16 f16 into the fp32 O
//                fp8:  m16n8k32 e4m3 into a per-tile accumulator, folded into
//                      O as O * corr + acc (two-level accumulation: the e4m3
//                      MMA's accumulator is not full fp32)
#pragma once
#include <cuda_fp16.h>
#include "sageattn/ptx.cuh"
#include "sm80/tile.cuh"

namespace sa {
namespace sm80 {

// acc = init + Q K^T (init: 0, or the bias of the biased conversion, softmax.cuh).
template <int DP, bool PV_FP8>
__device__ __forceinline__ void mma_qk(int32_t (&acc)[Frags<DP>::MT][Frags<DP>::NT][4],
                                       const uint32_t (&qf)[Frags<DP>::MT][Frags<DP>::KS][4], const uint8_t* sK,
                                       int lane, int32_t init) {
  using L = Smem<DP, PV_FP8>;
  constexpr int MT = Frags<DP>::MT, NT = Frags<DP>::NT, KS = Frags<DP>::KS;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int j = 0; j < NT; ++j) acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = init;
  const int kl = L::k_lane((lane >> 4) * 8 + (lane & 7), (lane >> 3) & 1);
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
#pragma unroll
    for (int pp = 0; pp < NT / 2; ++pp) {
      uint32_t b0, b1, b2, b3;
      ptx::ldmatrix_x4(b0, b1, b2, b3, sK + L::k_at(kl, pp * 16, ks * 2));
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        ptx::mma_m16n8k32_s8(acc[mt][2 * pp], qf[mt][ks], b0, b1);
        ptx::mma_m16n8k32_s8(acc[mt][2 * pp + 1], qf[mt][ks], b2, b3);
      }
    }
  }
}

// O += P(fp16) V(fp16), fp32 accumulation (O was rescaled by the softmax).
template <int DP>
__device__ __forceinline__ void mma_pv_f16(float (&o)[Frags<DP>::MT][Frags<DP>::ON][4],
                                           const uint32_t (&pa)[Frags<DP>::MT][4][4], const uint8_t* sV, int lane) {
  using L = Smem<DP, false>;
  constexpr int MT = Frags<DP>::MT, BK = cfg::kBlockK;
  const int vl = L::v_lane(((lane >> 3) & 1) * 8 + (lane & 7), lane >> 4);  // this lane's V row (key) and chunk
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
#pragma unroll
    for (int dp = 0; dp < DP / 16; ++dp) {
      uint32_t b0, b1, b2, b3;
      ptx::ldmatrix_x4_trans(b0, b1, b2, b3, sV + L::v_at(vl, kk * 16, dp * 2));
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        ptx::mma_m16n8k16_f16(o[mt][2 * dp], pa[mt][kk], b0, b1);
        ptx::mma_m16n8k16_f16(o[mt][2 * dp + 1], pa[mt][kk], b2, b3);
      }
    }
  }
}

// O = O * corr + P(e4m3) V^T(e4m3): two-level accumulation (sm_89+).
// F16ACC: the tile's products accumulate in f16 (pv_accum_f16, sageattn.h),
// widened into t0, t1, then join the fp32 O the same way.
template <int DP, bool F16ACC = false>
__device__ __forceinline__ void mma_pv_fp8(float (&o)[Frags<DP>::MT][Frags<DP>::ON][4],
                                           const uint32_t (&pa)[Frags<DP>::MT][2][4],
                                           const float (&corr)[Frags<DP>::MT][2], const uint8_t* sV, int lane) {
#if defined(SA_HAS_E4M3_MMA)
  uint32_t bf[2][4];
  float t0[4], t1[4];
  using L = Smem<DP, true>;
  constexpr int MT = Frags<DP>::MT;
  const int vl = L::v_lane((lane >> 4) * 8 + (lane & 7), (lane >> 3) & 1);
#pragma unroll
  for (int dp = 0; dp < DP / 16; ++dp) {
#pragma unroll
    for (int kk = 0; kk < 2; ++kk)
      ptx::ldmatrix_x4(bf[kk][0], bf[kk][1], bf[kk][2], bf[kk][3], sV + L::v_at(vl, dp * 16, kk * 2));
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      if constexpr (F16ACC) {
        uint32_t h0[2] = {0u, 0u}, h1[2] = {0u, 0u};  // f16x2: rows g (elements 0, 1) and g + 8 (2, 3)
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
          ptx::mma_m16n8k32_e4m3_f16acc(h0, pa[mt][kk], bf[kk][0], bf[kk][1]);
          ptx::mma_m16n8k32_e4m3_f16acc(h1, pa[mt][kk], bf[kk][2], bf[kk][3]);
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&h0[r]));
          const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&h1[r]));
          t0[2 * r] = a.x;
          t0[2 * r + 1] = a.y;
          t1[2 * r] = b.x;
          t1[2 * r + 1] = b.y;
        }
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) t0[e] = t1[e] = 0.f;
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
          ptx::mma_m16n8k32_e4m3(t0, pa[mt][kk], bf[kk][0], bf[kk][1]);
          ptx::mma_m16n8k32_e4m3(t1, pa[mt][kk], bf[kk][2], bf[kk][3]);
        }
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        o[mt][2 * dp][e] = o[mt][2 * dp][e] * corr[mt][e >> 1] + t0[e];
        o[mt][2 * dp + 1][e] = o[mt][2 * dp + 1][e] * corr[mt][e >> 1] + t1[e];
      }
    }
  }
#endif
}

}  // namespace sm80
}  // namespace sa
