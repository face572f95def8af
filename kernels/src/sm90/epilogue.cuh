// The epilogue of the sm90 family: O / l (times the fp8 path's V scale, plus
// its V mean) to the output in the caller's dtype and strides, and the
// natural-log LSE of the (dequantized, scaled) scores.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "sm90/softmax.cuh"

namespace sa {
namespace sm90 {

// Two values as one packed 32-bit pair of the output dtype (the lower column first).
template <typename OutT>
__device__ __forceinline__ uint32_t pack2(float a, float b);
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}

// x[j] of quad thread t becomes x[t] of thread j (a 4x4 transpose over the
// quad's lanes, two butterfly stages of two shuffles each).
__device__ __forceinline__ void quad_transpose(uint32_t (&x)[4], int tig) {
  {
    const bool hi = tig & 2;
    const uint32_t r0 = __shfl_xor_sync(0xffffffffu, hi ? x[0] : x[2], 2);
    const uint32_t r1 = __shfl_xor_sync(0xffffffffu, hi ? x[1] : x[3], 2);
    if (hi) {
      x[0] = r0;
      x[1] = r1;
    } else {
      x[2] = r0;
      x[3] = r1;
    }
  }
  {
    const bool odd = tig & 1;
    const uint32_t r0 = __shfl_xor_sync(0xffffffffu, odd ? x[0] : x[1], 1);
    const uint32_t r1 = __shfl_xor_sync(0xffffffffu, odd ? x[2] : x[3], 1);
    if (odd) {
      x[0] = r0;
      x[2] = r1;
    } else {
      x[1] = r0;
      x[3] = r1;
    }
  }
}

template <int DP, int kBN, bool PV_FP8, typename OutT, typename Softmax>
__device__ __forceinline__ void store_output(const sa_attn_params& p, const float (&o)[DP / 2], const Softmax& sm,
                                             const float* v_sm, size_t bhq, int b, int h, int row0, int tig, int q_len,
                                             bool vec_stores) {
  // Output rows of batch b: from q_seq_start[b] (packed), else from batch b's origin.
  const int64_t orow0 =
      p.q_seq_start != nullptr ? (int64_t)p.q_seq_start[b] * p.out_stride_seq : (int64_t)b * p.out_stride_batch;
  OutT* ob = reinterpret_cast<OutT*>(p.out) + orow0 + (int64_t)h * p.out_stride_head;
  // A batch element without keys writes zeros (and an LSE of -inf).
  const float inv0 = sm.l[0] > 0.f ? 1.f / sm.l[0] : 0.f, inv1 = sm.l[1] > 0.f ? 1.f / sm.l[1] : 0.f;
  const int row1 = row0 + 8;
  // The fp8 path's per-channel V scale and mean, from the warpgroup's copy in
  // shared memory (v_sm: DP scales, then DP means; Consumer::fetch_v_scale).
  float2 vs[DP / 8], vm[DP / 8];
#pragma unroll
  for (int j = 0; j < DP / 8; ++j) {
    const int d = j * 8 + tig * 2;
    vs[j] = make_float2(1.f, 1.f);
    vm[j] = make_float2(0.f, 0.f);
    if constexpr (PV_FP8) {
      vs[j] = *reinterpret_cast<const float2*>(v_sm + d);
      vm[j] = *reinterpret_cast<const float2*>(v_sm + DP + d);
    }
  }
  if (vec_stores) {
    // 16-byte stores: a 4x4 transpose of packed pairs inside each quad gives
    // every thread 8 consecutive columns of one chunk (fully used sectors,
    // a quarter of the store instructions).
#pragma unroll
    for (int m = 0; m < DP / 32; ++m) {
      uint32_t a[4], c[4];  // row0 / row1: the pairs of chunks 4m .. 4m+3
#pragma unroll
      for (int jj = 0; jj < 4; ++jj) {
        const int j = 4 * m + jj;
        a[jj] = pack2<OutT>(fmaf(o[4 * j + 0] * inv0, vs[j].x, vm[j].x), fmaf(o[4 * j + 1] * inv0, vs[j].y, vm[j].y));
        c[jj] = pack2<OutT>(fmaf(o[4 * j + 2] * inv1, vs[j].x, vm[j].x), fmaf(o[4 * j + 3] * inv1, vs[j].y, vm[j].y));
      }
      quad_transpose(a, tig);
      quad_transpose(c, tig);
      const int d = (4 * m + tig) * 8;
      if (d < p.head_dim) {
        if (row0 < q_len)
          *reinterpret_cast<uint4*>(ob + (size_t)row0 * p.out_stride_seq + d) = make_uint4(a[0], a[1], a[2], a[3]);
        if (row1 < q_len)
          *reinterpret_cast<uint4*>(ob + (size_t)row1 * p.out_stride_seq + d) = make_uint4(c[0], c[1], c[2], c[3]);
      }
    }
  } else
#pragma unroll
    for (int j = 0; j < DP / 8; ++j) {
      const int d = j * 8 + tig * 2;
      if (d < p.head_dim) {
        if (row0 < q_len)
          store2<OutT>(ob + (size_t)row0 * p.out_stride_seq + d, fmaf(o[4 * j + 0] * inv0, vs[j].x, vm[j].x),
                       fmaf(o[4 * j + 1] * inv0, vs[j].y, vm[j].y));
        if (row1 < q_len)
          store2<OutT>(ob + (size_t)row1 * p.out_stride_seq + d, fmaf(o[4 * j + 2] * inv1, vs[j].x, vm[j].x),
                       fmaf(o[4 * j + 3] * inv1, vs[j].y, vm[j].y));
      }
    }
  if (p.lse != nullptr && tig == 0) {
    const float off = PV_FP8 ? cfg::kLog2Fp8Max : 0.f;
    if (row0 < q_len) p.lse[bhq * p.q_len + row0] = (sm.m[0] + __log2f(sm.l[0]) - off) * cfg::kLn2;
    if (row1 < q_len) p.lse[bhq * p.q_len + row1] = (sm.m[1] + __log2f(sm.l[1]) - off) * cfg::kLn2;
  }
}

}  // namespace sm90
}  // namespace sa
