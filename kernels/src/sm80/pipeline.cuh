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
// Every thread copies 16-byte chunks; where a row's chunk count divides the
// CTA's threads, a thread's chunk column is the same in every pass and its
// rows step by a constant, so a pass costs one cp.async at an immediate offset
// from two per-tile bases (the index arithmetic of a generic chunk walk, with
// its signed divisions, ran every tile ahead of the tile's first MMA).
template <int DP, bool PV_FP8>
struct KvLoader {
  using L = Smem<DP, PV_FP8>;
  static constexpr int BK = cfg::kBlockK;
  static constexpr int T = cfg::kThreads;
  const AttnArgs& args;
  uint8_t* smem;
  const int8_t* kbase;  // this head's K
  // fp16 path: this head's V rows (view_rows, which reads a varlen batch's
  // start, once); fp8 path: unused (the V^T base is derived from bhk per tile,
  // which costs no register the loop would keep).
  const __half* vbase;
  size_t bhk;  // b * kv_heads + hk
  int v_rows;  // fp16 path: V's own rows (its view)
  unsigned tid;

  __device__ KvLoader(const AttnArgs& a, uint8_t* sm, const int8_t* kb, int b, int hk, size_t bhk_, int vr, int t)
      : args(a),
        smem(sm),
        kbase(kb),
        vbase(PV_FP8 ? nullptr : view_rows<__half>(a.p.v, b, hk)),
        bhk(bhk_),
        v_rows(vr),
        tid((unsigned)t) {}

  // Chunk i of a tile walked row by row, CPR chunks a row: (row, column).
  template <int CPR>
  __device__ __forceinline__ static void rc(unsigned i, int& r, int& c) {
    r = (int)(i / CPR);
    c = (int)(i % CPR);
  }

  // Not forced inline: the compiler inlines it where it decides, as it did the
  // lambda this was.
  __device__ void load(int t, int slot) const {
    uint8_t* sK = smem + slot * L::kStageBytes;
    uint8_t* sV = sK + L::kKBytes;
    // K: DP / 16 chunks a row.
    {
      constexpr int CPR = DP / 16, KCH = BK * CPR;
      static_assert(KCH % T == 0, "K tile chunks per thread");
      const int8_t* src = kbase + (size_t)t * BK * DP;
      if constexpr (T % CPR == 0) {
        constexpr int RPP = T / CPR;  // rows a pass
        int r, c;
        rc<CPR>(tid, r, c);
        const int8_t* g = src + r * DP + c * 16;
#pragma unroll
        for (int it = 0; it < KCH / T; ++it) ptx::cp_async_16(sK + L::k_chunk(r + it * RPP, c), g + it * RPP * DP);
      } else {
#pragma unroll
        for (int it = 0; it < KCH / T; ++it) {
          int r, c;
          rc<CPR>(it * T + tid, r, c);
          ptx::cp_async_16(sK + L::k_chunk(r, c), src + r * DP + c * 16);
        }
      }
    }
    if constexpr (!PV_FP8) {
      // fp16 V rows: DP / 8 chunks a row.  Rows past the view's sequence and
      // chunks past the head dim are zero-filled (never read): keys masked
      // by the softmax get P = 0, which must not meet a NaN of padding.
      const sa_attn_params& p = args.p;
      const __half* vb = vbase;
      constexpr int CPR = DP / 8, VCH = BK * CPR;
      static_assert(VCH % T == 0, "V tile chunks per thread");
      if constexpr (T % CPR == 0) {
        constexpr int RPP = T / CPR;
        int r, c;
        rc<CPR>(tid, r, c);
        const bool col_ok = c * 8 < p.head_dim;
        const int key0 = t * BK + r;
        // The source address of a zero-filled chunk is never read (cp.async
        // reads src-size 0 bytes), so the row pointer simply steps on.
        const __half* g = vb + (int64_t)key0 * p.v.stride_seq + c * 8;
        const int64_t step = (int64_t)RPP * p.v.stride_seq;
#pragma unroll
        for (int it = 0; it < VCH / T; ++it, g += step)
          ptx::cp_async_16(sV + L::v_chunk(r + it * RPP, c), g, col_ok && key0 + it * RPP < v_rows);
      } else {
#pragma unroll
        for (int it = 0; it < VCH / T; ++it) {
          int r, c;
          rc<CPR>(it * T + tid, r, c);
          const int key = t * BK + r;
          const bool ok = key < v_rows && c * 8 < p.head_dim;
          const __half* g = ok ? vb + (int64_t)key * p.v.stride_seq + c * 8 : vb;
          ptx::cp_async_16(sV + L::v_chunk(r, c), g, ok);
        }
      }
    } else {
      // e4m3 V^T: BK / 16 chunks a head-dim row, rows k_pad apart.
      const uint8_t* vb = args.p.v_fp8 + bhk * (size_t)DP * args.k_pad + (size_t)t * BK;
      constexpr int CPR = BK / 16, VCH = DP * CPR, RPP = T / CPR;
      static_assert(VCH % T == 0 && T % CPR == 0, "V^T tile chunks per thread");
      int d, c;
      rc<CPR>(tid, d, c);
      const uint8_t* g = vb + (size_t)d * args.k_pad + c * 16;
      const size_t step = (size_t)RPP * args.k_pad;
#pragma unroll
      for (int it = 0; it < VCH / T; ++it) ptx::cp_async_16(sV + L::v_chunk(d + it * RPP, c), g + it * step);
    }
  }
};

}  // namespace sm80
}  // namespace sa
