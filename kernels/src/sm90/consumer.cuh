// The consumer warpgroups of the sm90 family: for each work tile, 64 query
// rows against every key tile in the ring.
//
// Schedule: the P.V of key tile t-1 runs on the tensor cores while the
// softmax of tile t runs on the other units.  Per iteration t a warpgroup
// issues S_t = Q K_t^T and then P_{t-1} V_{t-1}, waits for S_t, runs the
// softmax of tile t, waits for the P.V and folds it into O, and packs P_t.
// fp8 causal runs fold the previous P.V into O between this tile's row maxima
// and its exponentials (faster there only; BENCHMARKS.md).
//
// O: the fp8 path keeps a fresh fp32 accumulator per key tile and adds it into
// O (two-level accumulation: the FP8 wgmma accumulator is not full fp32); the
// fp16 path accumulates straight into O after scaling it.
#pragma once
#include "sm90/epilogue.cuh"
#include "sm90/mma.cuh"
#include "sm90/pipeline.cuh"

namespace sa {
namespace sm90 {

constexpr int kOnesBarrier = 3;  // the row of ones is written (fp8 path)
constexpr int kVsBarrier = 4;    // named barriers 4, 5: warpgroup 0's and 1's V-scale copy (fp8 path)
constexpr int kQ8Barrier = 6;    // named barriers 6, 7: warpgroup 0's and 1's INT8 Q rows are written (QIN)
constexpr int kQmaxBarrier = 8;  // the 8 consumer warps' Q maxima are written (QIN, one scale per 128 rows)

template <int DP, bool CAUSAL, bool PV_FP8, typename OutT, bool QIN = false>
struct Consumer {
  using L = Tile<DP, PV_FP8, QIN>;
  static constexpr int kBN = L::kBN;
  static constexpr int kSub = L::kSub;
  using Softmax = OnlineSoftmax<kBN, PV_FP8, L::kRowSumMma>;
  using Frag = PFragment<kBN, PV_FP8>;

  const Params& prm;
  const Ring<DP, PV_FP8, QIN>& ring;
  const uint8_t* smem;  // generic address of the ring's base (K scales are read with ld.shared)
  int cw;               // consumer warpgroup 0 or 1
  int warp, g, tig;

  // Dequantization factors of stage s's two 64-key groups for this thread's K class.
  __device__ __forceinline__ void k_scales(int s, float qs, float (&c)[kSub]) const {
    const float* ks = reinterpret_cast<const float*>(smem + L::kOffKs + s * 128);
#pragma unroll
    for (int hh = 0; hh < kSub; ++hh) c[hh] = fmaxf(qs * ks[hh * 4 + tig], 1e-30f);
  }

  // Scores of stage s (complete) -> P in `frag`, the rows' rescale factor in corr.
  __device__ __forceinline__ void softmax(Softmax& sm, Frag& frag, const int32_t (&s_int)[kBN / 2], int s, int t,
                                          float qs, int wrow0, int kv_len, float (&corr)[2]) const {
    softmax(sm, frag, s_int, s, t, qs, wrow0, kv_len, corr, [] {});
  }
  template <typename Between>
  __device__ __forceinline__ void softmax(Softmax& sm, Frag& frag, const int32_t (&s_int)[kBN / 2], int s, int t,
                                          float qs, int wrow0, int kv_len, float (&corr)[2], Between&& between) const {
    float c[kSub];
    k_scales(s, qs, c);
    float sf[kBN / 2];
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) sf[i] = static_cast<float>(s_int[i]);
    const int key0 = t * kBN;
    const bool mask = (key0 + kBN > kv_len) || (CAUSAL && key0 + kBN - 1 > wrow0);
    if (mask)
      sm.template step<true, CAUSAL>(sf, c, key0, kv_len, wrow0 + g, tig, corr, between);
    else
      sm.template step<false, CAUSAL>(sf, c, key0, kv_len, wrow0 + g, tig, corr, between);
    frag.pack(sf);
  }

  __device__ __forceinline__ static void scale_o(float (&o)[DP / 2], const float (&corr)[2]) {
#pragma unroll
    for (int j = 0; j < DP / 8; ++j) {
      o[4 * j + 0] *= corr[0];
      o[4 * j + 1] *= corr[0];
      o[4 * j + 2] *= corr[1];
      o[4 * j + 3] *= corr[1];
    }
  }
  // O = O * corr + acc (fp8 two-level accumulation); with the row of ones, acc's
  // column DP holds P's row sums (thread tig 0; the others hold zeros there).
  __device__ __forceinline__ static void fold(float (&o)[DP / 2], Softmax& sm, const float (&acc)[L::kAccN],
                                              const float (&corr)[2]) {
#pragma unroll
    for (int j = 0; j < DP / 8; ++j) {
      o[4 * j + 0] = fmaf(o[4 * j + 0], corr[0], acc[4 * j + 0]);
      o[4 * j + 1] = fmaf(o[4 * j + 1], corr[0], acc[4 * j + 1]);
      o[4 * j + 2] = fmaf(o[4 * j + 2], corr[1], acc[4 * j + 2]);
      o[4 * j + 3] = fmaf(o[4 * j + 3], corr[1], acc[4 * j + 3]);
    }
    if constexpr (L::kRowSumMma) {
      sm.l[0] = fmaf(sm.l[0], corr[0], acc[DP / 2 + 0]);
      sm.l[1] = fmaf(sm.l[1], corr[1], acc[DP / 2 + 2]);
    }
  }

  // fp8 path: the work tile's V scale and mean (per channel of head bhk) into
  // this warpgroup's shared-memory copy, asynchronously (cp.async): they land
  // during the key loop, and the epilogue reads them without a global-memory
  // wait (those loads cost 3-6 % at N <= 2k when the epilogue issued them).
  __device__ __forceinline__ float* v_scale_copy() const {
    return reinterpret_cast<float*>(const_cast<uint8_t*>(smem) + L::kOffVs) + cw * 2 * DP;
  }
  __device__ __forceinline__ void fetch_v_scale(size_t bhk) const {
    if constexpr (PV_FP8) {
      const sa_attn_params& p = prm.a.p;
      float* dst = v_scale_copy();
      ptx::named_barrier_sync(kVsBarrier + cw, 128);  // the previous epilogue has read its copy
      for (int e = (int)threadIdx.x % 128; e < 2 * DP; e += 128) {
        if (e < DP)
          ptx::cp_async_4(dst + e, p.v_scale + bhk * DP + e);
        else if (p.v_mean != nullptr)
          ptx::cp_async_4(dst + e, p.v_mean + bhk * DP + (e - DP));
        else
          dst[e] = 0.f;
      }
      ptx::cp_async_commit();
    }
  }
  // Before the epilogue reads the copy: every thread's part has landed.
  __device__ __forceinline__ void wait_v_scale() const {
    if constexpr (PV_FP8) {
      ptx::cp_async_wait<0>();
      ptx::named_barrier_sync(kVsBarrier + cw, 128);
    }
  }

  // The row of ones under every stage's V^T (once per CTA, before the first P.V).
  __device__ __forceinline__ void init_ones() const {
    if constexpr (L::kRowSumMma) {
      const int t = threadIdx.x - 128;  // 0 .. 255 over both consumer warpgroups
#pragma unroll
      for (int s = 0; s < L::kStages; ++s) {
        uint32_t* row =
            reinterpret_cast<uint32_t*>(const_cast<uint8_t*>(smem) + L::kOffV + s * L::kVStride + L::kVBytes);
        row[t] = t < 32 ? 0x38383838u : 0u;  // e4m3 1.0 = 0x38: the group's first row (128 bytes), zeros after
      }
      ptx::fence_proxy_async_shared();
      ptx::named_barrier_sync(kOnesBarrier, kConsumerThreads);
    }
  }

  // QIN: this thread's two rows of the staged Q (rows g and g + 8 of its
  // warp's 16, the rows its S accumulators hold), elements [tig * DP/4, +DP/4),
  // quantized into the INT8 Q tile as sa_quant_qkv quantizes them (the same
  // groups, scales and rounding: the same bytes); returns the rows' scale,
  // amax / 127.  The staging slot is released, and the warpgroup's INT8 rows are
  // visible to its wgmma, when this returns.  Q is the caller's dtype (OutT).
  __device__ __forceinline__ float quantize_q(int slot, int gran) const {
    constexpr int kC = DP / 32;  // 16-byte input chunks (8 elements) per row and thread
    const uint8_t* stage = smem + L::kOffQIn + slot * L::kQInBytes;
    uint8_t* q8 = const_cast<uint8_t*>(smem) + L::kOffQ;
    const int r0 = cw * 64 + warp * 16 + g;  // CTA rows r0 and r0 + 8
    uint4 raw[2][kC];
    float am = 0.f;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = r0 + 8 * i;
#pragma unroll
      for (int c = 0; c < kC; ++c) {
        const int chunk = tig * kC + c, sub = chunk / 8, cc = chunk % 8;  // 128-byte rows, 128-byte swizzle
        raw[i][c] = *reinterpret_cast<const uint4*>(stage + sub * L::kQInSubBytes + r * 128 + ((cc ^ (r & 7)) << 4));
        float x[8];
        unpack8(raw[i][c], OutT{}, x);
#pragma unroll
        for (int e = 0; e < 8; ++e) am = fmaxf(am, fabsf(x[e]));
      }
    }
    // The group's maximum: the rows' four lanes (per thread), the warp (per warp), the CTA (per block).
    am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, 1));
    am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, 2));
    if (gran != SA_GRAN_PER_THREAD) {
#pragma unroll
      for (int o = 4; o < 32; o <<= 1) am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, o));
    }
    if (gran == SA_GRAN_PER_BLOCK) {
      float* qmax = reinterpret_cast<float*>(const_cast<uint8_t*>(smem) + L::kOffQmax);
      if (threadIdx.x % 32 == 0) qmax[cw * 4 + warp] = am;
      ptx::named_barrier_sync(kQmaxBarrier, kConsumerThreads);
#pragma unroll
      for (int w = 0; w < 2 * 4; ++w) am = fmaxf(am, qmax[w]);
    }
    // Everything read from the staging slot (and the maxima): the producer may refill it.  The next
    // tile's maxima are written after its Q lands, which waits for every consumer's arrival here.
    ptx::mbarrier_arrive(ring.q_empty(slot));
    const float inv = am > 0.f ? 127.f / am : 0.f;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = r0 + 8 * i;
#pragma unroll
      for (int j = 0; j < DP / 64; ++j) {  // 16 INT8 elements: input chunks 2j and 2j + 1
        uint32_t w[4];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float x[8];
          unpack8(raw[i][2 * j + h], OutT{}, x);
#pragma unroll
          for (int e = 0; e < 8; ++e) x[e] *= inv;
          w[2 * h] = ptx::pack_s8x4(x[0], x[1], x[2], x[3]);
          w[2 * h + 1] = ptx::pack_s8x4(x[4], x[5], x[6], x[7]);
        }
        // Byte column col of row r in the panel's swizzled rows (what TMA writes: 128-byte
        // swizzle in 128-byte panels, 64-byte swizzle in 64-byte ones).
        const int col = tig * (DP / 4) + 16 * j, pn = col / L::kPanel, c16 = (col % L::kPanel) / 16;
        const int sw = L::kPanel == 128 ? c16 ^ (r & 7) : c16 ^ ((r >> 1) & 3);
        *reinterpret_cast<uint4*>(q8 + pn * L::kQPanelBytes + r * L::kPanel + sw * 16) =
            make_uint4(w[0], w[1], w[2], w[3]);
      }
    }
    ptx::fence_proxy_async_shared();  // the generic-proxy stores, before the wgmma (async proxy) reads them
    ptx::named_barrier_sync(kQ8Barrier + cw, 128);
    return am / 127.f;
  }

  __device__ void run() const {
    const sa_attn_params& p = prm.a.p;
    RingPos pos;
    int loaded = 0;  // work tiles with loads so far (their Q slots, as the producer counts them)
    const int group = p.q_heads / p.kv_heads;
    init_ones();
    ptx::griddep_wait();  // the Q and V scales (the previous kernels in the stream) are complete
    for (int round = 0;; ++round) {
      const int w = work_slot(prm, round);
      if (w >= prm.total) break;
      const Work wk = decode_work<CAUSAL>(prm, w);
      const size_t bhq = (size_t)wk.b * p.q_heads + wk.h;
      const size_t bhk = (size_t)wk.b * p.kv_heads + wk.h / group;
      const Span span = work_span<kBN, CAUSAL>(p, wk);
      if (span.skipped(wk.qt)) continue;
      fetch_v_scale(bhk);
      const int n_tiles = span.n_tiles;
      const int wrow0 = wk.qt * kRows + cw * 64 + warp * 16;  // this warp's rows: wrow0 + g, + g + 8
      float qs = 0.f;
      if constexpr (!QIN) qs = p.q_scale[(bhq * (prm.a.q_pad / 16) + wrow0 / 16) * 8 + g] * prm.a.scale_log2;
      float o[DP / 2];
#pragma unroll
      for (int i = 0; i < DP / 2; ++i) o[i] = 0.f;
      Softmax sm;
      if (span.loads()) {
        const QSlot<L::kQSlots> qslot(loaded++);
        ptx::mbarrier_wait_parity(ring.q_full(qslot.slot), qslot.phase);
        if constexpr (QIN) qs = quantize_q(qslot.slot, p.q_granularity) * prm.a.scale_log2;
        // this warpgroup's rows in each Q panel; QIN: in the one INT8 Q tile, its staging slot already released
        const uint32_t sq = ring.q(QIN ? 0 : qslot.slot) + cw * 64 * L::kPanel;
        const uint32_t q_empty = QIN ? 0u : ring.q_empty(qslot.slot);
        overlapped(o, sm, pos, sq, q_empty, n_tiles, qs, wrow0, span.kv_len);
      }
      sm.finish();
      wait_v_scale();
      store_output<DP, kBN, PV_FP8, OutT>(p, o, sm, v_scale_copy(), bhq, wk.b, wk.h, wrow0 + g, tig, span.q_len,
                                          prm.out_vec);
    }
  }

  // PV of stage s with P in frag; O rescaled by corr (issue, wait).
  __device__ __forceinline__ void pv(float (&o)[DP / 2], Softmax& sm, const Frag& frag, int s,
                                     const float (&corr)[2]) const {
    if constexpr (PV_FP8) {
      float acc[L::kAccN];
      ptx::wgmma_fence();
      issue_pv<DP, kBN, true, false>(acc, frag.a, ring.v(s));
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();
      ptx::pin_registers(acc);
      fold(o, sm, acc, corr);
    } else {
      scale_o(o, corr);
      ptx::pin_registers(o);
      ptx::wgmma_fence();
      issue_pv<DP, kBN, false, true>(o, frag.a, ring.v(s));
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();
      ptx::pin_registers(o);
    }
  }

  // Software-pipelined: the P.V of tile t-1 is in flight during the softmax of tile t.
  __device__ __forceinline__ void overlapped(float (&o)[DP / 2], Softmax& sm, RingPos& pos, uint32_t sq,
                                             uint32_t q_empty, int n_tiles, float qs, int wrow0, int kv_len) const {
    Frag frag;           // P of the previous tile
    float corr[2];       // its rescale factor
    RingPos prev = pos;  // the previous tile's stage
    {                    // tile 0: Q.K^T and softmax only
      ptx::mbarrier_wait_parity(ring.full(pos.stage), pos.phase);
      int32_t s_int[kBN / 2];
      ptx::wgmma_fence();
      issue_qk<DP, kBN, L::kQPanelBytes, L::kKPanelBytes>(s_int, sq, ring.k(pos.stage));
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();
      ptx::pin_registers(s_int);
      if (!QIN && n_tiles == 1) ptx::mbarrier_arrive(q_empty);
      softmax(sm, frag, s_int, pos.stage, 0, qs, wrow0, kv_len, corr);
      pos.template advance<L::kStages>();
    }
    for (int t = 1; t < n_tiles; ++t) {
      const int s = pos.stage, sp = prev.stage;
      ptx::mbarrier_wait_parity(ring.full(s), pos.phase);
      int32_t s_int[kBN / 2];
      float acc[L::kAccN];
      if constexpr (!PV_FP8) {
        scale_o(o, corr);
        ptx::pin_registers(o);
      }
      ptx::wgmma_fence();
      issue_qk<DP, kBN, L::kQPanelBytes, L::kKPanelBytes>(s_int, sq, ring.k(s));
      ptx::wgmma_commit();
      if constexpr (PV_FP8)
        issue_pv<DP, kBN, true, false>(acc, frag.a, ring.v(sp));
      else
        issue_pv<DP, kBN, false, true>(o, frag.a, ring.v(sp));
      ptx::wgmma_commit();
      ptx::wgmma_wait<1>();  // S_t is complete; the P.V may still run
      ptx::pin_registers(s_int);
      if (!QIN && t == n_tiles - 1) ptx::mbarrier_arrive(q_empty);
      float corr_t[2];
      Frag next;
      // The P.V of tile t-1 done: P_{t-1} may leave its registers, acc joins O, the stage is free.
      auto finish_pv = [&] {
        ptx::wgmma_wait<0>();
        ptx::pin_registers(frag.a);  // P_{t-1} stays in its registers until its P.V is done
        if constexpr (PV_FP8) {
          ptx::pin_registers(acc);
          fold(o, sm, acc, corr);
        } else {
          ptx::pin_registers(o);
        }
        ptx::mbarrier_arrive(ring.empty(sp));
      };
      if constexpr (PV_FP8 && CAUSAL) {
        softmax(sm, next, s_int, s, t, qs, wrow0, kv_len, corr_t, finish_pv);
      } else {
        softmax(sm, next, s_int, s, t, qs, wrow0, kv_len, corr_t);
        finish_pv();
      }
      frag = next;
      corr[0] = corr_t[0];
      corr[1] = corr_t[1];
      prev = pos;
      pos.template advance<L::kStages>();
    }
    // the last tile's P.V
    pv(o, sm, frag, prev.stage, corr);
    ptx::mbarrier_arrive(ring.empty(prev.stage));
  }
};

}  // namespace sm90
}  // namespace sa
