// Data movement of the mma.sync families: Q straight from global memory into
// the MMA's A fragments (once per CTA), and the cp.async ring that streams K
// and V tiles into shared memory (every thread copies 16-byte chunks).
#pragma once
#include <cuda_fp16.h>
#include "sageattn/ptx.cuh"
#include "sm80/tile.cuh"

namespace sa {
namespace sm80 {

// Q fragments (A operand layout) and the rows' Q scales times sm_scale * log2(e).
template <int DP>
__device__ __forceinline__ void load_q(const AttnArgs& args, size_t bhq, int wq0, int g, int tig,
                                       uint32_t (&qf)[Frags<DP>::MT][Frags<DP>::KS][4], float (&qs)[Frags<DP>::MT]) {
  const sa_attn_params& p = args.p;
#pragma unroll
  for (int mt = 0; mt < Frags<DP>::MT; ++mt) {
    const int8_t* qb = p.q_int8 + (bhq * args.q_pad + wq0 + mt * 16 + g) * DP + tig * 4;
#pragma unroll
    for (int ks = 0; ks < Frags<DP>::KS; ++ks) {
      qf[mt][ks][0] = ptx::ld_global_u32(qb + ks * 32);
      qf[mt][ks][1] = ptx::ld_global_u32(qb + 8 * DP + ks * 32);
      qf[mt][ks][2] = ptx::ld_global_u32(qb + ks * 32 + 16);
      qf[mt][ks][3] = ptx::ld_global_u32(qb + 8 * DP + ks * 32 + 16);
    }
    qs[mt] = p.q_scale[(bhq * (args.q_pad / 16) + wq0 / 16 + mt) * 8 + g] * args.scale_log2;
  }
}

// Key tile t of head (b, hk) into ring slot `slot`: K as int8 rows, V as the
// caller's fp16 rows (zero past the view's sequence) or the quantized e4m3 V^T.
template <int DP, bool PV_FP8>
struct KvLoader {
  using L = Smem<DP, PV_FP8>;
  static constexpr int BK = cfg::kBlockK;
  const AttnArgs& args;
  uint8_t* smem;
  const int8_t* kbase;  // this head's K
  int b, hk;
  size_t bhk;  // b * kv_heads + hk
  int v_rows;  // fp16 path: V's own rows (its view)
  int tid;

  // Not forced inline: the compiler inlines it where it decides, as it did the
  // lambda this was (the generated code stays the same).
  __device__ void load(int t, int slot) const {
    const sa_attn_params& p = args.p;
    uint8_t* sK = smem + slot * L::kStageBytes;
    uint8_t* sV = sK + L::kKBytes;
    const int8_t* src = kbase + (size_t)t * BK * DP;
    constexpr int KCH = BK * DP / 16;
    static_assert(KCH % cfg::kThreads == 0, "K tile chunks per thread");
#pragma unroll
    for (int it = 0; it < KCH / cfg::kThreads; ++it) {
      const int i = it * cfg::kThreads + tid;
      const int r = i / (DP / 16), c = i % (DP / 16);
      ptx::cp_async_16(sK + r * L::kKStride + c * 16, src + r * DP + c * 16);
    }
    if constexpr (!PV_FP8) {
      const __half* vb = view_rows<__half>(p.v, b, hk);
      constexpr int VCH = BK * DP / 8;
      static_assert(VCH % cfg::kThreads == 0, "V tile chunks per thread");
#pragma unroll
      for (int it = 0; it < VCH / cfg::kThreads; ++it) {
        const int i = it * cfg::kThreads + tid;
        const int r = i / (DP / 8), c = i % (DP / 8);
        const int key = t * BK + r;
        // V rows past the view's sequence are zero-filled (never read): keys
        // masked below get P = 0, which must not meet a NaN of padding.
        const bool ok = key < v_rows && c * 8 < p.head_dim;
        const __half* s = ok ? vb + (size_t)key * p.v.stride_seq + c * 8 : vb;
        ptx::cp_async_16(sV + L::v_chunk(r, c), s, ok);  // zero-fill outside V
      }
    } else {
      const uint8_t* vb = p.v_fp8 + bhk * (size_t)DP * args.k_pad + (size_t)t * BK;
      constexpr int VCH = DP * (BK / 16);
      static_assert(VCH % cfg::kThreads == 0, "V^T tile chunks per thread");
#pragma unroll
      for (int it = 0; it < VCH / cfg::kThreads; ++it) {
        const int i = it * cfg::kThreads + tid;
        const int d = i / (BK / 16), c = i % (BK / 16);
        ptx::cp_async_16(sV + d * L::kVStride + c * 16, vb + (size_t)d * args.k_pad + c * 16);
      }
    }
  }
};

}  // namespace sm80
}  // namespace sa
