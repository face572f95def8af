// The epilogue of the mma.sync families: O / l (times the fp8 path's V scale,
// plus its V mean) to the output in the caller's dtype and strides, and the
// natural-log LSE of the (dequantized, scaled) scores.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "sm80/tile.cuh"

namespace sa {
namespace sm80 {

// A warp's rows wq0 .. wq0 + Frags<DP>::kRowsPerWarp of head (b, h); rows past q_len are
// not written.
template <int DP, bool PV_FP8, typename OutT>
__device__ __forceinline__ void store_output(const sa_attn_params& p, int b, int h, size_t bhq, size_t bhk, int wq0,
                                             int g, int tig, int q_len,
                                             const float (&o)[Frags<DP>::MT][Frags<DP>::ON][4],
                                             const float (&m)[Frags<DP>::MT][2], float (&l)[Frags<DP>::MT][2]) {
  constexpr int MT = Frags<DP>::MT, ON = Frags<DP>::ON;
  float inv[2];
  const int64_t orow0 =
      p.q_seq_start != nullptr ? (int64_t)p.q_seq_start[b] * p.out_stride_seq : (int64_t)b * p.out_stride_batch;
  OutT* ob = reinterpret_cast<OutT*>(p.out) + orow0 + (size_t)h * p.out_stride_head;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float v = l[mt][r];
      v += __shfl_xor_sync(0xffffffffu, v, 1);
      v += __shfl_xor_sync(0xffffffffu, v, 2);
      l[mt][r] = v;
      inv[r] = v > 0.f ? 1.f / v : 0.f;  // 0: a batch without keys (varlen) writes zeros
    }
    const int row0 = wq0 + mt * 16 + g, row1 = row0 + 8;
#pragma unroll
    for (int n = 0; n < ON; ++n) {
      const int d = n * 8 + tig * 2;
      if (d < p.head_dim) {
        float vs0 = 1.f, vs1 = 1.f, vm0 = 0.f, vm1 = 0.f;
        if constexpr (PV_FP8) {
          vs0 = p.v_scale[bhk * DP + d];
          vs1 = p.v_scale[bhk * DP + d + 1];
          if (p.v_mean) {
            vm0 = p.v_mean[bhk * DP + d];
            vm1 = p.v_mean[bhk * DP + d + 1];
          }
        }
        if (row0 < q_len)
          store2<OutT>(ob + (size_t)row0 * p.out_stride_seq + d, o[mt][n][0] * inv[0] * vs0 + vm0,
                       o[mt][n][1] * inv[0] * vs1 + vm1);
        if (row1 < q_len)
          store2<OutT>(ob + (size_t)row1 * p.out_stride_seq + d, o[mt][n][2] * inv[1] * vs0 + vm0,
                       o[mt][n][3] * inv[1] * vs1 + vm1);
      }
    }
    if (p.lse != nullptr && tig == 0) {
      const float off = PV_FP8 ? cfg::kLog2Fp8Max : 0.f;
      if (row0 < q_len) p.lse[bhq * p.q_len + row0] = (m[mt][0] + __log2f(l[mt][0]) - off) * cfg::kLn2;
      if (row1 < q_len) p.lse[bhq * p.q_len + row1] = (m[mt][1] + __log2f(l[mt][1]) - off) * cfg::kLn2;
    }
  }
}

}  // namespace sm80
}  // namespace sa
