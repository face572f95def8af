// The two GEMMs of the sm90 family on the warpgroup MMA (wgmma, sm_90a), for
// one consumer warpgroup's 64 query rows.
//   S  = Q K^T   m64n{kBN}k32 s8: Q and K from DP-byte-swizzled shared memory
//   O += P V     fp8:  m64n{DP}k32 e4m3, P from registers, V^T rows of kBN bytes
//                fp16: m64n{DP}k16 f16, P from registers, V [keys][dims] read
//                      MN-major (imm-trans-b) from 64-dim sub-tiles
#pragma once
#include "sageattn/ptx.cuh"
#include "sm90/tile.cuh"

namespace sa {
namespace sm90 {

// The instruction's N follows from the accumulator array (N = 2 x registers).
__device__ __forceinline__ void mma_s8(int32_t (&d)[32], uint64_t da, uint64_t db, int acc) {
  ptx::wgmma_m64n64k32_s8_ss(d, da, db, acc);
}
__device__ __forceinline__ void mma_s8(int32_t (&d)[64], uint64_t da, uint64_t db, int acc) {
  ptx::wgmma_m64n128k32_s8_ss(d, da, db, acc);
}
__device__ __forceinline__ void mma_e4m3(float (&d)[32], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n64k32_e4m3_rs(d, a, db, acc);
}
__device__ __forceinline__ void mma_e4m3(float (&d)[64], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n128k32_e4m3_rs(d, a, db, acc);
}
__device__ __forceinline__ void mma_e4m3(float (&d)[36], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n72k32_e4m3_rs(d, a, db, acc);
}
__device__ __forceinline__ void mma_e4m3(float (&d)[68], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n136k32_e4m3_rs(d, a, db, acc);
}
__device__ __forceinline__ void mma_f16_mn(float (&d)[32], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n64k16_f16_rs_tb(d, a, db, acc);
}
__device__ __forceinline__ void mma_f16_mn(float (&d)[64], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n128k16_f16_rs_tb(d, a, db, acc);
}
__device__ __forceinline__ void mma_f16_mn(float (&d)[96], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n192k16_f16_rs_tb(d, a, db, acc);
}
__device__ __forceinline__ void mma_f16_mn(float (&d)[128], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n256k16_f16_rs_tb(d, a, db, acc);
}

// A k-step's descriptor from the first one: the start address field (bits
// 0-13, address >> 4) advanced by `bytes`.  No carry leaves the field: shared
// memory ends below 2^18 bytes and every operand lies inside it.  One add per
// MMA instead of rebuilding the descriptor from the address (mask, shift, or:
// ~5 uniform instructions per MMA, 14 % of the main loop's instructions).
__device__ __forceinline__ uint64_t desc_advance(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

// S = Q K^T over the head dim (k32 steps of 32 bytes inside the swizzled rows
// of a panel; Tile::kPanel).  sq: this warpgroup's rows in Q's first panel,
// the others QP bytes apart; sk: K's first panel, the others KP bytes apart.
template <int DP, int kBN, int QP, int KP>
__device__ __forceinline__ void issue_qk(int32_t (&s)[kBN / 2], uint32_t sq, uint32_t sk) {
  constexpr int PW = panel_bytes(DP);
  const uint64_t dq = ptx::wgmma_desc<PW>(sq), dk = ptx::wgmma_desc<PW>(sk);
#pragma unroll
  for (int ks = 0; ks < DP / 32; ++ks) {
    const int pn = ks * 32 / PW, off = ks * 32 % PW;
    mma_s8(s, desc_advance(dq, pn * QP + off), desc_advance(dk, pn * KP + off), ks);
  }
}

// acc (+)= P V.  ACCUMULATE: add from the first k-step on (O as the
// accumulator); else the first k-step overwrites acc.
// NACC: DP/2 accumulators, or DP/2 + 4 when V^T carries the row of ones (N = DP + 8).
template <int DP, int kBN, bool PV_FP8, bool ACCUMULATE, int KSTEPS, int NACC>
__device__ __forceinline__ void issue_pv(float (&acc)[NACC], const uint32_t (&pa)[KSTEPS][4], uint32_t sv) {
  const uint64_t dv = PV_FP8 ? ptx::wgmma_desc<kBN>(sv) : ptx::wgmma_desc<128>(sv, kBN * 128, 8 * 128);
#pragma unroll
  for (int kk = 0; kk < KSTEPS; ++kk) {
    const int add = ACCUMULATE ? 1 : kk;
    if constexpr (PV_FP8) {
      // k-step kk: keys [32kk, 32kk+32) are bytes [32kk, 32kk+32) of every V^T row
      mma_e4m3(acc, pa[kk], desc_advance(dv, kk * 32), add);
    } else {
      // k-step kk: keys [16kk, 16kk+16) are rows of every 64-dim sub-tile; the
      // sub-tiles (N atoms) are kBN*128 bytes apart, 8-key groups 1 KiB apart
      mma_f16_mn(acc, pa[kk], desc_advance(dv, kk * 16 * 128), add);
    }
  }
}

}  // namespace sm90
}  // namespace sa
