// Data movement of the sm90 family: the shared-memory ring and its mbarriers,
// and the producer that fills it with TMA copies.
//
// Barriers: full[s] completes when stage s has landed (one producer arrival
// plus the TMA transaction bytes); empty[s] when all consumer threads are done
// reading it; q_full[i] / q_empty[i] the same for Q slot i (work tiles use the
// two slots in turn, so the next Q is loaded while the current tile runs).
// Phases alternate; a waiter passes the parity of the phase it waits for (the
// producer starts at parity 1 on the empty barriers, which a fresh barrier
// treats as already completed).
#pragma once
#include "sageattn/ptx_async.cuh"
#include "sm90/tile.cuh"

namespace sa {
namespace sm90 {

template <int DP, bool PV_FP8, bool QIN = false>
struct Ring {
  using L = Tile<DP, PV_FP8, QIN>;
  uint32_t base;  // shared address, 1 KiB aligned

  // Q slot `slot` (INT8, by TMA); QIN: the one INT8 Q tile the consumers write
  __device__ __forceinline__ uint32_t q(int slot) const { return base + L::kOffQ + slot * L::kQBytes; }
  __device__ __forceinline__ uint32_t q_in(int slot) const { return base + L::kOffQIn + slot * L::kQInBytes; }
  __device__ __forceinline__ uint32_t k(int s) const { return base + L::kOffK + s * L::kKBytes; }
  __device__ __forceinline__ uint32_t v(int s) const { return base + L::kOffV + s * L::kVStride; }
  __device__ __forceinline__ uint32_t ks(int s) const { return base + L::kOffKs + s * 128; }
  __device__ __forceinline__ uint32_t full(int s) const { return base + L::kOffBar + 8 * s; }
  __device__ __forceinline__ uint32_t empty(int s) const { return base + L::kOffBar + 8 * (L::kStages + s); }
  __device__ __forceinline__ uint32_t q_full(int slot) const { return base + L::kOffBar + 8 * (2 * L::kStages + slot); }
  __device__ __forceinline__ uint32_t q_empty(int slot) const {
    return base + L::kOffBar + 8 * (2 * L::kStages + L::kQSlots + slot);
  }

  // One thread, before the role split (followed by a CTA barrier).
  __device__ __forceinline__ void init() const {
    for (int s = 0; s < L::kStages; ++s) {
      ptx::mbarrier_init(full(s), 1);
      ptx::mbarrier_init(empty(s), kConsumerThreads);
    }
    for (int q = 0; q < L::kQSlots; ++q) {
      ptx::mbarrier_init(q_full(q), 1);
      ptx::mbarrier_init(q_empty(q), kConsumerThreads);
    }
    ptx::fence_mbarrier_init();
  }
};

// The Q slot of this CTA's n-th work tile (of SLOTS, 1 or 2), and the parity of that slot's phase.
template <int SLOTS>
struct QSlot {
  static_assert(SLOTS == 1 || SLOTS == 2, "one or two Q slots");
  int slot;
  uint32_t phase;
  __device__ __forceinline__ explicit QSlot(int n) : slot(n % SLOTS), phase((uint32_t)(n / SLOTS) & 1u) {}
};

// Position in the ring: stage index and the parity of its current phase.
struct RingPos {
  int stage = 0;
  uint32_t phase = 0;
  template <int STAGES>
  __device__ __forceinline__ void advance() {
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

// The producer: one thread walks the same work list as the consumers and
// issues, per work tile, the Q copy and then every key tile's K, V and K-scale
// copies, each into the next stage the consumers have released.
template <int DP, bool CAUSAL, bool PV_FP8, bool QIN>
__device__ __forceinline__ void produce(const Params& prm, const Ring<DP, PV_FP8, QIN>& ring) {
  using L = Tile<DP, PV_FP8, QIN>;
  const sa_attn_params& p = prm.a.p;
  ptx::prefetch_tensormap(QIN ? &prm.tm_qf : &prm.tm_q);
  ptx::prefetch_tensormap(&prm.tm_k);
  ptx::prefetch_tensormap(&prm.tm_v);
  ptx::prefetch_tensormap(&prm.tm_ks);
  ptx::griddep_wait();  // the quantized Q, K, V (the previous kernels in the stream) are complete
  RingPos pos;
  int loaded = 0;  // work tiles with loads so far: they take the Q slots in turn
  const int group = p.q_heads / p.kv_heads;
  for (int round = 0;; ++round) {
    const int w = work_slot(prm, round);
    if (w >= prm.total) break;
    const Work wk = decode_work<CAUSAL>(prm, w);
    const int hk = wk.h / group;
    [[maybe_unused]] const int bhq = wk.b * p.q_heads + wk.h;  // INT8 Q's (not QIN)
    const int bhk = wk.b * p.kv_heads + hk;
    const Span span = work_span<L::kBN, CAUSAL>(p, wk);
    if (span.skipped(wk.qt) || !span.loads()) continue;
    const int n_tiles = span.n_tiles;

    const QSlot<L::kQSlots> qs(loaded++);
    ptx::mbarrier_wait_parity(ring.q_empty(qs.slot), qs.phase ^ 1u);  // the consumers are done with that slot
    if constexpr (QIN) {  // the caller's rows, zeros past its sequence and head dim
      ptx::mbarrier_arrive_expect_tx(ring.q_full(qs.slot), L::kQInBytes);
#pragma unroll
      for (int d = 0; d < DP / 64; ++d)
        ptx::tma_load_4d(ring.q_in(qs.slot) + d * L::kQInSubBytes, &prm.tm_qf, ring.q_full(qs.slot), d * 64,
                         wk.qt * kRows, wk.h, wk.b);
    } else {
      ptx::mbarrier_arrive_expect_tx(ring.q_full(qs.slot), L::kQBytes);
#pragma unroll
      for (int pn = 0; pn < L::kPanels; ++pn)
        ptx::tma_load_3d(ring.q(qs.slot) + pn * L::kQPanelBytes, &prm.tm_q, ring.q_full(qs.slot), pn * L::kPanel,
                         wk.qt * kRows, bhq);
    }

    for (int t = 0; t < n_tiles; ++t) {
      const int s = pos.stage;
      ptx::mbarrier_wait_parity(ring.empty(s), pos.phase ^ 1u);
      ptx::mbarrier_arrive_expect_tx(ring.full(s), L::kTxBytes);
#pragma unroll
      for (int pn = 0; pn < L::kPanels; ++pn)
        ptx::tma_load_3d(ring.k(s) + pn * L::kKPanelBytes, &prm.tm_k, ring.full(s), pn * L::kPanel, t * L::kBN, bhk);
      if constexpr (PV_FP8) {
        ptx::tma_load_3d(ring.v(s), &prm.tm_v, ring.full(s), t * L::kBN, 0, bhk);
      } else {
#pragma unroll
        for (int d = 0; d < DP / 64; ++d)
          ptx::tma_load_4d(ring.v(s) + d * L::kVSubBytes, &prm.tm_v, ring.full(s), d * 64, t * L::kBN, hk, wk.b);
      }
      ptx::tma_load_3d(ring.ks(s), &prm.tm_ks, ring.full(s), 0, t * L::kSub, bhk);
      pos.advance<L::kStages>();
    }
  }
}

}  // namespace sm90
}  // namespace sa
