// The SageAttention forward kernel, shared by the two PV families.
//   S = (Q_int8 K_int8^T) * q_scale * k_scale * sm_scale * log2(e)  (mma m16n8k32 s8)
//   online softmax in the exp2 domain (running max m, running sum l)
//   O += P V  with P fp16 (mma m16n8k16, fp32 accumulation)         PV_FP8 = false
//          or P e4m3 scaled by 448 and V e4m3 per-channel scaled
//             (mma m16n8k32 e4m3 into a per-key-tile accumulator,
//              added to the fp32 output accumulator)                PV_FP8 = true
// One CTA = kWarps x 16 query rows of one (batch, head); keys are
// streamed in 64-key tiles through a cp.async ring of K (int8) and V tiles.
#pragma once
#include <cstdint>
#include <type_traits>
// Tuning switches (kernels/dev/NOTES.md, v5); the shipped values are the defaults.
// int32 scores -> float by a 1.5*2^23 bias in the s8 MMA accumulator instead of a
// conversion per score; per PV path (measured: fp8 +1.5 %, fp16 -3 % at N=2k).
#ifndef SA_MAGIC_CVT_FP8
#define SA_MAGIC_CVT_FP8 1
#endif
#ifndef SA_MAGIC_CVT_FP16
#define SA_MAGIC_CVT_FP16 0
#endif
#ifndef SA_LAZY_RESCALE
#define SA_LAZY_RESCALE 1  // fp16 PV: keep a stale row max unless it grows by > kLazyLog2 (warp vote)
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "common.cuh"
#include "sageattn/config.cuh"
#include "sageattn/ptx.cuh"
#include "sageattn/sageattn.h"

namespace sa {

struct AttnArgs {
  sa_attn_params p;
  int q_pad, k_pad;
  float scale_log2;  // sm_scale * log2(e), folded into the q scale
};

template <int DP, bool PV_FP8>
struct AttnSmem {
  static constexpr int kKStride = DP + cfg::kSmemPad;  // bytes per key row (int8)
  static constexpr int kKBytes = cfg::kBlockK * kKStride;
  // fp16 V: [key][dim] halves; fp8 V^T: [dim][key] bytes
  static constexpr int kVStride = PV_FP8 ? (cfg::kBlockK + cfg::kSmemPad) : (DP * 2 + cfg::kSmemPad);
  static constexpr int kVBytes = PV_FP8 ? DP * kVStride : cfg::kBlockK * kVStride;
  static constexpr int kStages = PV_FP8 ? cfg::kStagesFp8 : cfg::kStagesFp16;
  static constexpr int kStageBytes = kKBytes + kVBytes;
  static constexpr int kTotal = kStages * kStageBytes;
  static_assert(kKStride % 16 == 0 && kVStride % 16 == 0 && kKBytes % 16 == 0, "16-byte aligned rows");
};

template <typename OutT>
__device__ __forceinline__ void store2(OutT* p, float a, float b);
template <>
__device__ __forceinline__ void store2<__half>(__half* p, float a, float b) {
  *reinterpret_cast<__half2*>(p) = __floats2half2_rn(a, b);
}
template <>
__device__ __forceinline__ void store2<__nv_bfloat16>(__nv_bfloat16* p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(a, b);
}

// The kernel body; the two families wrap it in differently named __global__
// functions (attn_pv_fp16_kernel / attn_pv_fp8_kernel) so each family's kernels
// can be recognised by name in the SASS (families.json "symbol_marker").
template <int DP, bool CAUSAL, bool PV_FP8, typename OutT>
__device__ __forceinline__ void attn_body(const AttnArgs& args) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // never launched: the families are built only for archs that can run them
#else
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
  if constexpr (PV_FP8) {  // e4m3 mma needs sm_89+; the pv_fp8 family is not built below 8.9
    __trap();
    return;
  }
#endif
  using L = AttnSmem<DP, PV_FP8>;
  constexpr int BK = cfg::kBlockK;
  constexpr int KS = DP / 32;           // k32 steps over the head dim
  constexpr int NT = BK / 8;            // n8 tiles of S per key tile
  constexpr int ON = DP / 8;            // n8 tiles of O
  constexpr int MT = cfg::kWarpMTiles;  // m16 tiles per warp (B fragments reused MT times)
  // kMagic: the s8 MMA accumulates onto the bit pattern of 1.5*2^23, so
  // each int32 result x reads as the float 1.5*2^23 + x exactly (|x| <= 128*127*127
  // < 2^22): no int->float conversion per score; the bias is subtracted in
  // the exp2 FFMA (c*s - (c*bias + shift)) and exactly from the row max.
  constexpr bool kMagic = PV_FP8 ? SA_MAGIC_CVT_FP8 != 0 : SA_MAGIC_CVT_FP16 != 0;
  constexpr int32_t kAccInit = kMagic ? 0x4B400000 : 0;
  constexpr float kBias = kMagic ? 12582912.0f : 0.f;
  static_assert(DP * 127 * 127 < (1 << 22), "biased int32 -> float needs |x| < 2^22");
  // SA_LAZY_RESCALE (fp16 PV only): O and l are rescaled only when some row max of
  // the warp grew by more than kLazyLog2 (exp2 domain); otherwise the stale max is
  // kept and P <= 2^kLazyLog2 (exact in fp16, O/l/lse stay consistent).  Not for
  // fp8 P, which must stay <= 448.
  constexpr bool kLazy = !PV_FP8 && SA_LAZY_RESCALE != 0;
  constexpr float kLazyLog2 = 8.f;
  extern __shared__ __align__(128) uint8_t smem[];
  const sa_attn_params& p = args.p;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, tig = lane & 3;
  const int b = blockIdx.z, h = blockIdx.y;
  const int qt = CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;  // long rows first
  const int hk = h / (p.q_heads / p.kv_heads);
  const int q0 = qt * cfg::kCtaRows;
  const int wq0 = q0 + warp * cfg::kRowsPerWarp;  // first row of this warp; m-tile mt starts at wq0 + 16 mt
  // Variable-length batches: this batch's query rows and keys (sageattn.h).
  const int q_len = batch_len(p.q_seq_len, b, p.q_len);
  if (q0 >= q_len) return;                           // the whole CTA is padding of a shorter sequence
  const int v_rows = PV_FP8 ? 0 : view_len(p.v, b);  // fp16 path: V's own rows (its view)
  // kv_end: the keys this CTA visits, both the loop bound and the key mask.
  // Causal: clipped to the end of the tile of the CTA's last row; the causal
  // test masks every key past that row, so the clip never hides a valid key.
  int kv_end = batch_len(p.kv_seq_len, b, p.kv_len);
  if (CAUSAL) kv_end = min(kv_end, ((min(q0 + cfg::kCtaRows, q_len) - 1) / BK + 1) * BK);
  // Whether tile t has keys to visit.  The D=128 kernels sit at the register
  // cap: they test kv_end alone (a tile count live beside it adds spills to the
  // loop, ptxas); D=64 has room for the count, which keeps its tile addressing
  // cheaper (fewer integer instructions per tile).
  const int n_tiles = (kv_end + BK - 1) / BK;
  auto has_tile = [&](int t) { return DP == 128 ? t * BK < kv_end : t < n_tiles; };

  const size_t bhq = (size_t)b * p.q_heads + h;
  const size_t bhk = (size_t)b * p.kv_heads + hk;

  // Q fragments straight from global memory into registers (A operand layout).
  uint32_t qf[MT][KS][4];
  float qs[MT];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int8_t* qb = p.q_int8 + (bhq * args.q_pad + wq0 + mt * 16 + g) * DP + tig * 4;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      qf[mt][ks][0] = ptx::ld_global_u32(qb + ks * 32);
      qf[mt][ks][1] = ptx::ld_global_u32(qb + 8 * DP + ks * 32);
      qf[mt][ks][2] = ptx::ld_global_u32(qb + ks * 32 + 16);
      qf[mt][ks][3] = ptx::ld_global_u32(qb + 8 * DP + ks * 32 + 16);
    }
    qs[mt] = p.q_scale[(bhq * (args.q_pad / 16) + wq0 / 16 + mt) * 8 + g] * args.scale_log2;
  }
  const int8_t* kbase = p.k_int8 + bhk * (size_t)args.k_pad * DP;
  const float* ksbase = p.k_scale + bhk * (size_t)(args.k_pad / BK) * 4;

  auto load_tile = [&](int t, int slot) {
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
        ptx::cp_async_16(sV + r * L::kVStride + c * 16, s, ok);  // zero-fill outside V
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
  };

  float o[MT][ON][4];
  float m[MT][2], l[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int n = 0; n < ON; ++n) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.f;
    m[mt][0] = m[mt][1] = -INFINITY;
    l[mt][0] = l[mt][1] = 0.f;
  }

#pragma unroll
  for (int s = 0; s < L::kStages - 1; ++s) {
    if (has_tile(s)) load_tile(s, s);
    ptx::cp_async_commit();
  }

  for (int t = 0; has_tile(t); ++t) {
    const float kscale = ksbase[t * 4 + tig];
    ptx::cp_async_wait<L::kStages - 2>();
    __syncthreads();  // tile t visible to all; slot of tile t-1 free
    {
      const int nt = t + L::kStages - 1;
      if (has_tile(nt)) load_tile(nt, nt % L::kStages);
      ptx::cp_async_commit();
    }
    const uint8_t* sK = smem + (t % L::kStages) * L::kStageBytes;
    const uint8_t* sV = sK + L::kKBytes;

    // ---- S = Q K^T (int8 -> int32); each K fragment feeds MT MMAs
    int32_t acc[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < NT; ++j) acc[mt][j][0] = acc[mt][j][1] = acc[mt][j][2] = acc[mt][j][3] = kAccInit;
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
#pragma unroll
      for (int pp = 0; pp < NT / 2; ++pp) {
        uint32_t b0, b1, b2, b3;
        ptx::ldmatrix_x4(
            b0, b1, b2, b3,
            sK + (pp * 16 + (lane >> 4) * 8 + (lane & 7)) * L::kKStride + ks * 32 + ((lane >> 3) & 1) * 16);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          ptx::mma_m16n8k32_s8(acc[mt][2 * pp], qf[mt][ks], b0, b1);
          ptx::mma_m16n8k32_s8(acc[mt][2 * pp + 1], qf[mt][ks], b2, b3);
        }
      }
    }

    // ---- online softmax (exp2 domain).  The dequantization scale
    // c = q_scale * k_scale * sm_scale * log2e is applied inside the exp2's
    // FFMA; the row max is taken on the integer scores scaled per thread (c
    // differs between the threads of a quad: per-thread K scales; c > 0 and
    // rounding is monotonic, so max(x)*c == max(x*c)).  c is clamped away from
    // 0: a zero scale means zero int8 values, so acc == 0 there.
    uint32_t pa[MT][PV_FP8 ? 2 : 4][4];  // P as the A operand of the PV MMA
    float corr[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const float c = fmaxf(qs[mt] * kscale, 1e-30f);
      const int row0 = wq0 + mt * 16 + g;
      float s[NT][4];
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[j][e] = kMagic ? __int_as_float(acc[mt][j][e]) : static_cast<float>(acc[mt][j][e]);
      const bool need_mask = (t * BK + BK > kv_end) || (CAUSAL && t * BK + BK - 1 > wq0 + mt * 16);
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
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        mx[0] = fmaxf(mx[0], fmaxf(s[j][0], s[j][1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[j][2], s[j][3]));
      }
      float rmax[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float v = (kMagic ? mx[r] - kBias : mx[r]) * c;  // exact subtraction of the bias; -inf stays -inf
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
        rmax[r] = fmaxf(m[mt][r], v);
      }
      bool rescale = true;
      if constexpr (kLazy)
        rescale = __any_sync(0xffffffffu, rmax[0] > m[mt][0] + kLazyLog2 || rmax[1] > m[mt][1] + kLazyLog2);
      if (rescale) {  // warp-uniform
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const float mu = (rmax[r] == -INFINITY) ? 0.f : rmax[r];
          corr[mt][r] = ptx::ex2_approx(m[mt][r] - mu);
          m[mt][r] = rmax[r];
        }
        if constexpr (kLazy) {
#pragma unroll
          for (int n = 0; n < ON; ++n) {
            o[mt][n][0] *= corr[mt][0];
            o[mt][n][1] *= corr[mt][0];
            o[mt][n][2] *= corr[mt][1];
            o[mt][n][3] *= corr[mt][1];
          }
          l[mt][0] *= corr[mt][0];
          l[mt][1] *= corr[mt][1];
        }
      }
      float sh[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float mu = (m[mt][r] == -INFINITY) ? 0.f : m[mt][r];
        // fp8: P is produced directly in [0, 448] (x448 folded into the exponent)
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
        l[mt][0] += rs0;
        l[mt][1] += rs1;
      } else {
        l[mt][0] = l[mt][0] * corr[mt][0] + rs0;
        l[mt][1] = l[mt][1] * corr[mt][1] + rs1;
      }
      if constexpr (!PV_FP8) {
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          pa[mt][kk][0] = ptx::pack_f16x2(s[2 * kk][0], s[2 * kk][1]);
          pa[mt][kk][1] = ptx::pack_f16x2(s[2 * kk][2], s[2 * kk][3]);
          pa[mt][kk][2] = ptx::pack_f16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
          pa[mt][kk][3] = ptx::pack_f16x2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
        }
      } else {
        // logical k position 4*tig+i of each 16-key group holds key perm(4*tig+i)
        // (V^T is stored permuted the same way by the V quantization kernel)
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
          pa[mt][kk][0] = ptx::pack_e4m3x4(s[4 * kk][0], s[4 * kk][1], s[4 * kk + 1][0], s[4 * kk + 1][1]);
          pa[mt][kk][1] = ptx::pack_e4m3x4(s[4 * kk][2], s[4 * kk][3], s[4 * kk + 1][2], s[4 * kk + 1][3]);
          pa[mt][kk][2] = ptx::pack_e4m3x4(s[4 * kk + 2][0], s[4 * kk + 2][1], s[4 * kk + 3][0], s[4 * kk + 3][1]);
          pa[mt][kk][3] = ptx::pack_e4m3x4(s[4 * kk + 2][2], s[4 * kk + 2][3], s[4 * kk + 3][2], s[4 * kk + 3][3]);
        }
      }
    }

    if constexpr (!PV_FP8) {
      // ---- O = O * corr + P(fp16) V(fp16), fp32 accumulation
      if constexpr (!kLazy) {  // (lazy: rescaled above, only when needed)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int n = 0; n < ON; ++n) {
            o[mt][n][0] *= corr[mt][0];
            o[mt][n][1] *= corr[mt][0];
            o[mt][n][2] *= corr[mt][1];
            o[mt][n][3] *= corr[mt][1];
          }
      }
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
#pragma unroll
        for (int dp = 0; dp < DP / 16; ++dp) {
          uint32_t b0, b1, b2, b3;
          ptx::ldmatrix_x4_trans(
              b0, b1, b2, b3,
              sV + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * L::kVStride + (dp * 16 + (lane >> 4) * 8) * 2);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            ptx::mma_m16n8k16_f16(o[mt][2 * dp], pa[mt][kk], b0, b1);
            ptx::mma_m16n8k16_f16(o[mt][2 * dp + 1], pa[mt][kk], b2, b3);
          }
        }
      }
    } else {
#if defined(SA_HAS_E4M3_MMA)
      // ---- two-level accumulation: per-tile MMA accumulator, then fp32 O
#pragma unroll
      for (int dp = 0; dp < DP / 16; ++dp) {
        uint32_t bf[2][4];
#pragma unroll
        for (int kk = 0; kk < 2; ++kk)
          ptx::ldmatrix_x4(
              bf[kk][0], bf[kk][1], bf[kk][2], bf[kk][3],
              sV + (dp * 16 + (lane >> 4) * 8 + (lane & 7)) * L::kVStride + kk * 32 + ((lane >> 3) & 1) * 16);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          float t0[4] = {0.f, 0.f, 0.f, 0.f}, t1[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
          for (int kk = 0; kk < 2; ++kk) {
            ptx::mma_m16n8k32_e4m3(t0, pa[mt][kk], bf[kk][0], bf[kk][1]);
            ptx::mma_m16n8k32_e4m3(t1, pa[mt][kk], bf[kk][2], bf[kk][3]);
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
  }
  ptx::cp_async_wait<0>();

  // ---- epilogue
  const int64_t orow0 =
      p.q_seq_start != nullptr ? (int64_t)p.q_seq_start[b] * p.out_stride_seq : (int64_t)b * p.out_stride_batch;
  OutT* ob = reinterpret_cast<OutT*>(p.out) + orow0 + (size_t)h * p.out_stride_head;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    float inv[2];
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
#endif
}

template <int DP, bool CAUSAL, typename OutT>
__global__ void __launch_bounds__(cfg::kThreads, cfg::kMinBlocksPerSm)
    attn_pv_fp16_kernel(const __grid_constant__ AttnArgs args) {
  attn_body<DP, CAUSAL, false, OutT>(args);
}
template <int DP, bool CAUSAL, typename OutT>
__global__ void __launch_bounds__(cfg::kThreads, cfg::kMinBlocksPerSm)
    attn_pv_fp8_kernel(const __grid_constant__ AttnArgs args) {
  attn_body<DP, CAUSAL, true, OutT>(args);
}

template <int DP, bool CAUSAL, bool PV_FP8, typename OutT>
sa_status launch_attn_instance(const AttnArgs& a, cudaStream_t stream) {
  using L = AttnSmem<DP, PV_FP8>;
  void (*kern)(AttnArgs);
  if constexpr (PV_FP8)
    kern = attn_pv_fp8_kernel<DP, CAUSAL, OutT>;
  else
    kern = attn_pv_fp16_kernel<DP, CAUSAL, OutT>;
  SA_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kTotal));
  dim3 grid(a.q_pad / cfg::kCtaRows, a.p.q_heads, a.p.batch);
  kern<<<grid, cfg::kThreads, L::kTotal, stream>>>(a);
  SA_LAUNCH_CHECK(PV_FP8 ? "attn_qk_int8_pv_fp8" : "attn_qk_int8_pv_fp16");
  return SA_OK;
}

// Validation shared by every attention family (mma.sync and sm90).
inline sa_status check_attn_params(const sa_attn_params* p, bool pv_fp8, const char* fn) {
  SA_CHECK_ARG(p != nullptr, "%s: null params", fn);
  SA_CHECK_ARG(p->q_int8 && p->q_scale && p->k_int8 && p->k_scale && p->out, "%s: null tensor pointer", fn);
  SA_CHECK_ARG(p->batch > 0 && p->q_heads > 0 && p->kv_heads > 0 && p->q_len > 0 && p->kv_len > 0,
               "%s: sizes must be positive (batch %d, q_heads %d, kv_heads %d, q_len %d, kv_len %d)", fn, p->batch,
               p->q_heads, p->kv_heads, p->q_len, p->kv_len);
  SA_CHECK_ARG(p->q_heads % p->kv_heads == 0, "%s: q_heads (%d) must be a multiple of kv_heads (%d)", fn, p->q_heads,
               p->kv_heads);
  SA_CHECK_ARG(p->head_dim > 0 && p->head_dim <= 128 && p->head_dim % 8 == 0,
               "%s: head_dim must be a multiple of 8 in [8, 128], got %d", fn, p->head_dim);
  SA_CHECK_ARG(p->q_heads <= 65535 && p->batch <= 65535, "%s: too many heads or batches for the grid", fn);
  SA_CHECK_ARG(p->out_dtype == SA_DTYPE_F16 || p->out_dtype == SA_DTYPE_BF16, "%s: out dtype must be f16 or bf16", fn);
  SA_CHECK_ARG((reinterpret_cast<uintptr_t>(p->out) & 3) == 0 && p->out_stride_batch % 2 == 0 &&
                   p->out_stride_head % 2 == 0 && p->out_stride_seq % 2 == 0,
               "%s: out must be 4-byte aligned with even strides", fn);
  if (!pv_fp8) {
    sa_status st = check_view(p->v, "v");
    if (st != SA_OK) return st;
    SA_CHECK_ARG(p->v.dtype == SA_DTYPE_F16, "%s: v must be float16 for the fp16 PV path", fn);
    SA_CHECK_ARG(
        p->v.batch == p->batch && p->v.heads == p->kv_heads && p->v.seq == p->kv_len && p->v.dim == p->head_dim,
        "%s: v view [%d,%d,%d,%d] does not match [batch %d, kv_heads %d, kv_len %d, head_dim %d]", fn, p->v.batch,
        p->v.heads, p->v.seq, p->v.dim, p->batch, p->kv_heads, p->kv_len, p->head_dim);
  } else {
    SA_CHECK_ARG(p->v_fp8 && p->v_scale, "%s: v_fp8 and v_scale are required", fn);
  }
  return SA_OK;
}

inline AttnArgs make_attn_args(const sa_attn_params* p) {
  AttnArgs a;
  a.p = *p;
  a.q_pad = (int)sa_round_up(p->q_len, cfg::kBlockQ);
  a.k_pad = (int)sa_round_up(p->kv_len, cfg::kBlockK);
  a.scale_log2 = p->sm_scale * cfg::kLog2e;
  return a;
}

// Validation + the (head dim, causal, out dtype) dispatch of the attention kernel.
template <bool PV_FP8>
sa_status launch_attn(const sa_attn_params* p, cudaStream_t stream) {
  const char* fn = PV_FP8 ? "sa_attn_qk_int8_pv_fp8" : "sa_attn_qk_int8_pv_fp16";
  sa_status st = check_attn_params(p, PV_FP8, fn);
  if (st != SA_OK) return st;
  const AttnArgs a = make_attn_args(p);
  const int dp = sa_padded_head_dim(p->head_dim);
  return dispatch_head_dim(dp, [&](auto d) {
    return dispatch_bool(p->causal != 0, [&](auto c) {
      return dispatch_dtype(p->out_dtype, [&](auto od) {
        using OutT = std::conditional_t<decltype(od)::value == SA_DTYPE_F16, __half, __nv_bfloat16>;
        return launch_attn_instance<decltype(d)::value, decltype(c)::value != 0, PV_FP8, OutT>(a, stream);
      });
    });
  });
}

}  // namespace sa
