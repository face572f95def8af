// Family "sm90" (sm_90a only): the SageAttention forward on Hopper's warpgroup
// MMA, for both P.V paths.  Same algorithm, inputs and outputs as the mma.sync
// families (the quantized layouts of sageattn.h, per-thread Q/K scales), so it
// is a drop-in for sa_attn_qk_int8_pv_fp8 / _fp16 on compute capability 9.0:
//   S = Q K^T      wgmma m64nBk32 s8 (Q and K from swizzled shared memory)
//   online softmax in the exp2 domain
//   fp8:  P scaled into [0, 448] as e4m3; acc = P V^T (wgmma m64nDk32 e4m3, V^T
//         e4m3 with the key permutation of sa_v_key_perm); O = O * corr + acc
//         (two-level accumulation: a fresh MMA accumulator per key tile)
//   fp16: P as f16; O = O * corr, then O += P V^T in the wgmma accumulator
//         (m64nDk16 f16, V transposed to f16 V^T in stream-ordered scratch by
//         transpose_v_f16_kernel)
// One warpgroup owns 64 query rows; a CTA has kWarpgroups of them (1: two CTAs
// per SM for fp8, three for fp16).  K and V^T tiles of B keys (128 for fp8 at
// D=128, else 64) stream through a cp.async ring.  Alternatives measured and
// dropped (issuing Q K^T one tile ahead, fp16 with lazy rescaling, V as an
// MN-major operand, fp16 with two-level accumulation): see kernels/dev/NOTES.md.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mutex>
#include <type_traits>
#include "attn_kernel.cuh"

#ifndef SA90_WARPGROUPS
#define SA90_WARPGROUPS 1
#endif
// Tile shapes per padded head dim (measured on the H100, kernels/dev/NOTES.md).
// fp8 P.V: D=128: 128-key tiles, 3 stages (2 CTAs/SM fit in shared memory);
// D=64: 64-key tiles, 4 stages.
#ifndef SA90_BN_D128
#define SA90_BN_D128 128
#endif
#ifndef SA90_STAGES_D128
#define SA90_STAGES_D128 3
#endif
#ifndef SA90_F16_BN
#define SA90_F16_BN 64
#endif
// fp16 P.V accumulates straight into O (no two-level scheme: 64 registers
// fewer), which lets 3 CTAs share an SM: 64-key tiles; D=128: 2 stages (57 KB
// of shared memory per CTA), D=64: 4 stages (53 KB).
#ifndef SA90_F16_STAGES_D128
#define SA90_F16_STAGES_D128 2
#endif
#ifndef SA90_F16_STAGES_D64
#define SA90_F16_STAGES_D64 4
#endif
#ifndef SA90_F16_CTAS_D128
#define SA90_F16_CTAS_D128 3
#endif
#ifndef SA90_F16_CTAS_D64
#define SA90_F16_CTAS_D64 3
#endif
#ifndef SA90_BN_D64
#define SA90_BN_D64 64
#endif
#ifndef SA90_STAGES_D64
#define SA90_STAGES_D64 4
#endif

namespace sa {
namespace sm90 {

constexpr int kWarpgroups = SA90_WARPGROUPS;
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kRows = 64 * kWarpgroups;  // query rows per CTA
static_assert(cfg::kBlockK == 64, "K/V padding and K scale granularity");
static_assert(cfg::kBlockQ % kRows == 0, "CTAs tile the padded Q exactly");

template <int DP, bool PV_FP8>
struct Smem {
  // fp16 P.V: 64-key tiles by default (SA90_F16_BN; V^T then is one 128-byte swizzle row per dim).
  static constexpr int kBN = !PV_FP8 ? SA90_F16_BN : DP == 128 ? SA90_BN_D128 : SA90_BN_D64;  // keys per tile
  static constexpr int kSub = kBN / 64;  // 64-key sub-tiles (the K scale granularity) per tile
  static constexpr int kStages = !PV_FP8 ? (DP == 128 ? SA90_F16_STAGES_D128 : SA90_F16_STAGES_D64)
                                         : DP == 128 ? SA90_STAGES_D128 : SA90_STAGES_D64;
  // CTAs per SM (the kernel's register budget): fp8 keeps two-level accumulation (2 CTAs).
  static constexpr int kCtas = kWarpgroups != 1 ? 1 : PV_FP8 ? 2 : DP == 128 ? SA90_F16_CTAS_D128 : SA90_F16_CTAS_D64;
  static constexpr int kVElem = PV_FP8 ? 1 : 2;      // bytes per V element
  // V^T is stored as kVSub sub-tiles [DP][kVRow bytes]; a sub-tile row is one swizzle row.
  static constexpr int kVRow = kBN * kVElem > 128 ? 128 : kBN * kVElem;
  static constexpr int kVSub = kBN * kVElem / kVRow;
  static_assert(kBN == 64 || kBN == 128, "64- or 128-key tiles (K and V^T are padded to 64 keys)");

  static constexpr int kQBytes = kRows * DP;   // int8, DP-byte rows, DP-byte swizzle
  static constexpr int kKBytes = kBN * DP;     // int8, DP-byte rows
  static constexpr int kVBytes = DP * kVRow * kVSub;  // V^T (e4m3 or f16)
  static_assert(kVRow == 64 || kVRow == 128, "V^T rows are one swizzle row");
  static constexpr int kStageBytes = kKBytes + kVBytes;
  static constexpr int kTotal = kQBytes + kStages * kStageBytes + 1024;  // + alignment slack
  static_assert(kQBytes % 1024 == 0 && kKBytes % 1024 == 0 && kVBytes % 1024 == 0, "1 KiB-aligned tiles");
};

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
__device__ __forceinline__ void mma_f16(float (&d)[32], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n64k16_f16_rs(d, a, db, acc);
}
__device__ __forceinline__ void mma_f16(float (&d)[64], const uint32_t (&a)[4], uint64_t db, int acc) {
  ptx::wgmma_m64n128k16_f16_rs(d, a, db, acc);
}

template <int DP, int kBN>
__device__ __forceinline__ void qk_mma(int32_t (&s)[kBN / 2], uint32_t sq, uint32_t sk) {
#pragma unroll
  for (int ks = 0; ks < DP / 32; ++ks)
    mma_s8(s, ptx::wgmma_desc<DP>(sq + ks * 32), ptx::wgmma_desc<DP>(sk + ks * 32), ks);
}

// Every k-step of P.V covers 32 bytes of a V^T row: 32 e4m3 keys or 16 f16 keys.
// V^T sub-tiles are [DP][VROW bytes]: k-step kk starts at byte kk*32 of the tile row.
// ACCUMULATE: add into acc from the first k-step (else the first step overwrites it).
template <int DP, int VROW, bool PV_FP8, int KSTEPS, bool ACCUMULATE = false>
__device__ __forceinline__ void pv_mma(float (&acc)[DP / 2], const uint32_t (&pa)[KSTEPS][4], uint32_t sv) {
#pragma unroll
  for (int kk = 0; kk < KSTEPS; ++kk) {
    const uint32_t a = sv + (kk * 32 / VROW) * (DP * VROW) + (kk * 32) % VROW;
    const int add = ACCUMULATE ? 1 : kk;
    if constexpr (PV_FP8)
      mma_e4m3(acc, pa[kk], ptx::wgmma_desc<VROW>(a), add);
    else
      mma_f16(acc, pa[kk], ptx::wgmma_desc<VROW>(a), add);
  }
}

template <int DP, bool CAUSAL, bool PV_FP8, typename OutT>
__global__ void __launch_bounds__(kThreads, (Smem<DP, PV_FP8>::kCtas))
    attn_sm90_kernel(const __grid_constant__ AttnArgs args) {
#if defined(__CUDA_ARCH__) && !defined(SA_HAS_WGMMA)
  __trap();  // the family is built for sm_90a only
#else
  using L = Smem<DP, PV_FP8>;
  constexpr int kBN = L::kBN, kSub = L::kSub, kStages = L::kStages;
  constexpr int kPvSteps = kBN * L::kVElem / 32;  // P.V k-steps per tile
  constexpr int kAhead = kStages - 1;  // tiles in flight ahead of the current one
  static_assert(kAhead >= 1, "ring depth");
  constexpr int NJ = kBN / 8;  // n8 column chunks of S
  constexpr int ON = DP / 8;   // n8 column chunks of O
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const sa_attn_params& p = args.p;

  const int tid = threadIdx.x, lane = tid & 31, warp = (tid >> 5) & 3, wg = tid >> 7;
  const int g = lane >> 2, tig = lane & 3;
  const int b = blockIdx.z, h = blockIdx.y;
  const int qt = CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;  // long rows first
  const int hk = h / (p.q_heads / p.kv_heads);
  const int q0 = qt * kRows;
  const int wrow0 = q0 + wg * 64 + warp * 16;  // first row of this warp; its thread rows: +g, +g+8
  // [varlen] per-batch query rows and keys (sageattn.h); a CTA past its sequence exits.
  const int q_len = batch_len(p.q_seq_len, b, p.q_len);
  if (q0 >= q_len) return;
  const int kv_len = batch_len(p.kv_seq_len, b, p.kv_len);

  int n_tiles = (kv_len + kBN - 1) / kBN;
  if (CAUSAL) n_tiles = min(n_tiles, (min(q0 + kRows, q_len) - 1) / kBN + 1);

  const size_t bhq = (size_t)b * p.q_heads + h;
  const size_t bhk = (size_t)b * p.kv_heads + hk;

  // 1 KiB-aligned shared-space base (swizzle patterns repeat every 1 KiB).
  const uint32_t raw = ptx::smem_u32(smem_raw);
  const uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  uint8_t* base = smem_raw + pad;
  const uint32_t sbase = raw + pad;
  const uint32_t sQ = sbase;
  auto stage_k = [&](int slot) { return L::kQBytes + slot * L::kStageBytes; };
  auto stage_v = [&](int slot) { return L::kQBytes + slot * L::kStageBytes + L::kKBytes; };

  const int8_t* kbase = p.k_int8 + bhk * (size_t)args.k_pad * DP;
  // V^T [B, Hk, DP, k_pad]: e4m3 from sa_quant_v_fp8, or f16 from transpose_v_f16 below
  const uint8_t* vbase = reinterpret_cast<const uint8_t*>(PV_FP8 ? static_cast<const void*>(p.v_fp8) : p.v.data) +
                         bhk * (size_t)DP * args.k_pad * L::kVElem;
  const float* ksbase = p.k_scale + bhk * (size_t)(args.k_pad / 64) * 4;

  auto load_tile = [&](int t, int slot) {
    uint8_t* dk = base + stage_k(slot);
    uint8_t* dv = base + stage_v(slot);
    const int key0 = t * kBN;  // keys >= k_pad (a 128-key tile past the 64-key padding) are zero-filled
    const int8_t* sk = kbase + (size_t)key0 * DP;
    constexpr int KCH = kBN * DP / 16;  // 16-byte chunks, DP/16 per key row
    static_assert(KCH % kThreads == 0, "K chunks per thread");
#pragma unroll
    for (int it = 0; it < KCH / kThreads; ++it) {
      const int i = it * kThreads + tid;
      const int r = i / (DP / 16), c = i % (DP / 16);
      const bool ok = kSub == 1 || key0 + r < args.k_pad;
      ptx::cp_async_16(dk + ptx::swizzle_offset<DP>(r, c), ok ? sk + r * DP + c * 16 : sk, ok);
    }
    const uint8_t* sv = vbase + (size_t)key0 * L::kVElem;
    constexpr int VC = L::kVRow * L::kVSub / 16;  // 16-byte chunks per V^T row of the tile
    constexpr int SC = L::kVRow / 16;             // ... per sub-tile row
    constexpr int KPC = 16 / L::kVElem; // keys per chunk
    constexpr int VCH = DP * VC;
    static_assert(VCH % kThreads == 0, "V chunks per thread");
#pragma unroll
    for (int it = 0; it < VCH / kThreads; ++it) {
      const int i = it * kThreads + tid;
      const int d = i / VC, c = i % VC;
      const bool ok = kSub == 1 || key0 + c * KPC < args.k_pad;
      ptx::cp_async_16(dv + (c / SC) * (DP * L::kVRow) + ptx::swizzle_offset<L::kVRow>(d, c % SC),
                       ok ? sv + ((size_t)d * args.k_pad + c * KPC) * L::kVElem : sv, ok);
    }
  };

  // Q tile (all warpgroups' rows), in the first cp.async group with tile 0.
  {
    const int8_t* sq = p.q_int8 + (bhq * args.q_pad + q0) * DP;
    constexpr int QCH = kRows * DP / 16;
    static_assert(QCH % kThreads == 0, "Q chunks per thread");
#pragma unroll
    for (int it = 0; it < QCH / kThreads; ++it) {
      const int i = it * kThreads + tid;
      const int r = i / (DP / 16), c = i % (DP / 16);
      ptx::cp_async_16(base + ptx::swizzle_offset<DP>(r, c), sq + r * DP + c * 16);
    }
  }
#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    if (s < n_tiles) load_tile(s, s);
    ptx::cp_async_commit();
  }

  const float qs = p.q_scale[(bhq * (args.q_pad / 16) + wrow0 / 16) * 8 + g] * args.scale_log2;
  const uint32_t sQw = sQ + wg * 64 * DP;  // this warpgroup's 64 rows

  float o[DP / 2];
#pragma unroll
  for (int i = 0; i < DP / 2; ++i) o[i] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};


  for (int t = 0; t < n_tiles; ++t) {
    const int slot = t % kStages;
    ptx::cp_async_wait<kAhead - 1>();  // tile t has landed
    ptx::fence_proxy_async_shared();
    __syncthreads();  // ... for every thread; and every thread is done with the slot refilled next
    {
      const int nt = t + kAhead;
      if (nt < n_tiles) load_tile(nt, nt % kStages);
      ptx::cp_async_commit();
    }
    int32_t s_int[kBN / 2];  // the Q K^T accumulators (the first k-step overwrites them)
    ptx::wgmma_fence();
    qk_mma<DP, kBN>(s_int, sQw, sbase + stage_k(slot));
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
    ptx::pin_registers(s_int);

    // ---- online softmax of tile t (exp2 domain; see attn_kernel.cuh for the scale folding)
    float c[kSub];  // dequantization scale per 64-key sub-tile (per-thread K scale class tig)
#pragma unroll
    for (int hh = 0; hh < kSub; ++hh) {
      const int sub = t * kSub + hh;
      const float kscale = (kSub == 1 || sub * 64 < args.k_pad) ? ksbase[sub * 4 + tig] : 0.f;
      c[hh] = fmaxf(qs * kscale, 1e-30f);
    }
    float s[kBN / 2];
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) s[i] = static_cast<float>(s_int[i]);
    const bool need_mask = (t * kBN + kBN > kv_len) || (CAUSAL && t * kBN + kBN - 1 > wrow0);  // [varlen] kv_len
    if (need_mask) {
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = t * kBN + j * 8 + tig * 2 + (e & 1);
          const int row = wrow0 + g + (e >> 1) * 8;
          if (key >= kv_len || (CAUSAL && key > row)) s[4 * j + e] = -INFINITY;
        }
    }
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
    float corr[2], sh[2];
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
      sh[r] = PV_FP8 ? mu - cfg::kLog2Fp8Max : mu;  // fp8: P in [0, 448], x448 folded into the exponent
    }
    float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      const float cj = c[j / 8];
      s[4 * j + 0] = ptx::ex2_approx(fmaf(s[4 * j + 0], cj, -sh[0]));
      s[4 * j + 1] = ptx::ex2_approx(fmaf(s[4 * j + 1], cj, -sh[0]));
      s[4 * j + 2] = ptx::ex2_approx(fmaf(s[4 * j + 2], cj, -sh[1]));
      s[4 * j + 3] = ptx::ex2_approx(fmaf(s[4 * j + 3], cj, -sh[1]));
      rs0 += s[4 * j + 0] + s[4 * j + 1];
      rs1 += s[4 * j + 2] + s[4 * j + 3];
    }
    l[0] = l[0] * corr[0] + rs0;
    l[1] = l[1] * corr[1] + rs1;
    uint32_t pa[kPvSteps][4];
    // P as the A fragment of m64nNk32 (per warp the m16n8k32 layout): logical k
    // position 4*tig+i of each 16-key group holds key sa_v_key_perm(4*tig+i).
    // (fp16 P: k16 steps, the m16n8k16 A layout: no permutation.)
#pragma unroll
    for (int kk = 0; kk < kPvSteps; ++kk) {
      if constexpr (PV_FP8) {
        const int j0 = 4 * kk;
        pa[kk][0] = ptx::pack_e4m3x4(s[4 * j0 + 0], s[4 * j0 + 1], s[4 * (j0 + 1) + 0], s[4 * (j0 + 1) + 1]);
        pa[kk][1] = ptx::pack_e4m3x4(s[4 * j0 + 2], s[4 * j0 + 3], s[4 * (j0 + 1) + 2], s[4 * (j0 + 1) + 3]);
        pa[kk][2] = ptx::pack_e4m3x4(s[4 * (j0 + 2) + 0], s[4 * (j0 + 2) + 1], s[4 * (j0 + 3) + 0], s[4 * (j0 + 3) + 1]);
        pa[kk][3] = ptx::pack_e4m3x4(s[4 * (j0 + 2) + 2], s[4 * (j0 + 2) + 3], s[4 * (j0 + 3) + 2], s[4 * (j0 + 3) + 3]);
      } else {
        const int j0 = 2 * kk;
        pa[kk][0] = ptx::pack_f16x2(s[4 * j0 + 0], s[4 * j0 + 1]);
        pa[kk][1] = ptx::pack_f16x2(s[4 * j0 + 2], s[4 * j0 + 3]);
        pa[kk][2] = ptx::pack_f16x2(s[4 * (j0 + 1) + 0], s[4 * (j0 + 1) + 1]);
        pa[kk][3] = ptx::pack_f16x2(s[4 * (j0 + 1) + 2], s[4 * (j0 + 1) + 3]);
      }
    }

    if constexpr (!PV_FP8) {
      // ---- fp16: O = O * corr + P V, O being the wgmma accumulator
#pragma unroll
      for (int j = 0; j < ON; ++j) {
        o[4 * j + 0] *= corr[0];
        o[4 * j + 1] *= corr[0];
        o[4 * j + 2] *= corr[1];
        o[4 * j + 3] *= corr[1];
      }
      ptx::pin_registers(o);
      ptx::wgmma_fence();
      pv_mma<DP, L::kVRow, PV_FP8, kPvSteps, true>(o, pa, sbase + stage_v(slot));
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();
      ptx::pin_registers(o);
    } else {
      // ---- fp8: acc = P V (fresh accumulator), then O = O * corr + acc (two-level accumulation)
      float acc[DP / 2];
      ptx::pin_registers(acc);
      ptx::wgmma_fence();
      pv_mma<DP, L::kVRow, PV_FP8, kPvSteps>(acc, pa, sbase + stage_v(slot));
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();
      ptx::pin_registers(acc);
#pragma unroll
      for (int j = 0; j < ON; ++j) {
        o[4 * j + 0] = fmaf(o[4 * j + 0], corr[0], acc[4 * j + 0]);
        o[4 * j + 1] = fmaf(o[4 * j + 1], corr[0], acc[4 * j + 1]);
        o[4 * j + 2] = fmaf(o[4 * j + 2], corr[1], acc[4 * j + 2]);
        o[4 * j + 3] = fmaf(o[4 * j + 3], corr[1], acc[4 * j + 3]);
      }
    }
  }
  ptx::cp_async_wait<0>();

  // ---- epilogue (as the pv_fp8 family); [varlen] packed output rows from q_seq_start[b]
  const int64_t orow0 = p.q_seq_start != nullptr ? (int64_t)p.q_seq_start[b] * p.out_stride_seq
                                                 : (int64_t)b * p.out_stride_batch;
  OutT* ob = reinterpret_cast<OutT*>(p.out) + orow0 + (size_t)h * p.out_stride_head;
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float v = l[r];
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    v += __shfl_xor_sync(0xffffffffu, v, 2);
    l[r] = v;
    inv[r] = v > 0.f ? 1.f / v : 0.f;  // [varlen] a batch without keys writes zeros
  }
  const int row0 = wrow0 + g, row1 = row0 + 8;
#pragma unroll
  for (int j = 0; j < ON; ++j) {
    const int d = j * 8 + tig * 2;
    if (d < p.head_dim) {
      float vs0 = 1.f, vs1 = 1.f, vm0 = 0.f, vm1 = 0.f;
      if (PV_FP8) {
        vs0 = p.v_scale[bhk * DP + d];
        vs1 = p.v_scale[bhk * DP + d + 1];
      }
      if (PV_FP8 && p.v_mean) {
        vm0 = p.v_mean[bhk * DP + d];
        vm1 = p.v_mean[bhk * DP + d + 1];
      }
      if (row0 < q_len)
        store2<OutT>(ob + (size_t)row0 * p.out_stride_seq + d, o[4 * j + 0] * inv[0] * vs0 + vm0,
                     o[4 * j + 1] * inv[0] * vs1 + vm1);
      if (row1 < q_len)
        store2<OutT>(ob + (size_t)row1 * p.out_stride_seq + d, o[4 * j + 2] * inv[1] * vs0 + vm0,
                     o[4 * j + 3] * inv[1] * vs1 + vm1);
    }
  }
  if (p.lse != nullptr && tig == 0) {
    const float off = PV_FP8 ? cfg::kLog2Fp8Max : 0.f;
    if (row0 < q_len) p.lse[bhq * p.q_len + row0] = (m[0] + __log2f(l[0]) - off) * cfg::kLn2;
    if (row1 < q_len) p.lse[bhq * p.q_len + row1] = (m[1] + __log2f(l[1]) - off) * cfg::kLn2;
  }
#endif
}

// V [B, Hk, N, D] f16 (any strides, D contiguous) -> V^T [B, Hk, DP, k_pad] f16,
// zero outside [N, D], through a 64-key x DP shared tile (coalesced both ways).
template <int DP>
__global__ void __launch_bounds__(256) transpose_v_f16_kernel(sa_view v, __half* __restrict__ vt, int k_pad) {
  __shared__ __half tile[64][DP + 8];
  const int b = blockIdx.z, h = blockIdx.y, k0 = blockIdx.x * 64, tid = threadIdx.x;
  const __half* src = view_rows<__half>(v, b, h);  // [varlen] the view's seq_start / seq_len
  const int len = view_len(v, b);
  constexpr int CPR = DP / 8;  // 16-byte chunks per key row
#pragma unroll
  for (int i = tid; i < 64 * CPR; i += 256) {
    const int r = i / CPR, c = (i % CPR) * 8;
    uint4 u = make_uint4(0, 0, 0, 0);
    if (k0 + r < len && c < v.dim) u = *reinterpret_cast<const uint4*>(src + (size_t)(k0 + r) * v.stride_seq + c);
    const __half* hv = reinterpret_cast<const __half*>(&u);
#pragma unroll
    for (int e = 0; e < 8; ++e) tile[r][c + e] = hv[e];
  }
  __syncthreads();
  __half* dst = vt + ((size_t)b * v.heads + h) * DP * (size_t)k_pad + k0;
#pragma unroll
  for (int i = tid; i < DP * 8; i += 256) {  // 8 chunks of 8 keys per V^T row
    const int d = i / 8, kc = (i % 8) * 8;
    __align__(16) __half w[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) w[e] = tile[kc + e][d];
    *reinterpret_cast<uint4*>(dst + (size_t)d * k_pad + kc) = *reinterpret_cast<const uint4*>(w);
  }
}

template <int DP, bool CAUSAL, bool PV_FP8, typename OutT>
sa_status launch(const AttnArgs& a, cudaStream_t stream) {
  using L = Smem<DP, PV_FP8>;
  auto kern = attn_sm90_kernel<DP, CAUSAL, PV_FP8, OutT>;
  SA_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kTotal));
  dim3 grid(a.q_pad / kRows, a.p.q_heads, a.p.batch);
  kern<<<grid, kThreads, L::kTotal, stream>>>(a);
  SA_LAUNCH_CHECK(PV_FP8 ? "attn_sm90_qk_int8_pv_fp8" : "attn_sm90_qk_int8_pv_fp16");
  return SA_OK;
}

template <bool PV_FP8>
sa_status launch_dispatch(const AttnArgs& a, int dp, cudaStream_t stream) {
  return dispatch_head_dim(dp, [&](auto d) {
    return dispatch_bool(a.p.causal != 0, [&](auto c) {
      return dispatch_dtype(a.p.out_dtype, [&](auto od) {
        using OutT = std::conditional_t<decltype(od)::value == SA_DTYPE_F16, __half, __nv_bfloat16>;
        return launch<decltype(d)::value, decltype(c)::value != 0, PV_FP8, OutT>(a, stream);
      });
    });
  });
}

// Stream-ordered scratch for V^T: a memory pool of our own per device (never the
// device's default pool, whose settings belong to the application), which keeps
// freed blocks for reuse instead of returning them at every synchronization.
cudaError_t scratch_pool(cudaMemPool_t* out) {
  static std::mutex mu;
  static cudaMemPool_t pools[64] = {};
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if (dev < 0 || dev >= 64) return cudaErrorInvalidDevice;
  std::lock_guard<std::mutex> lock(mu);
  if (pools[dev] == nullptr) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    e = cudaMemPoolCreate(&pools[dev], &props);
    if (e != cudaSuccess) return e;
    uint64_t keep = UINT64_MAX;
    e = cudaMemPoolSetAttribute(pools[dev], cudaMemPoolAttrReleaseThreshold, &keep);
    if (e != cudaSuccess) return e;
  }
  *out = pools[dev];
  return cudaSuccess;
}

}  // namespace sm90
}  // namespace sa

extern "C" sa_status sa_attn_sm90_qk_int8_pv_fp8(const sa_attn_params* p, cudaStream_t stream) {
  using namespace sa;
  sa_status st = check_attn_params(p, true, "sa_attn_sm90_qk_int8_pv_fp8");
  if (st != SA_OK) return st;
  return sm90::launch_dispatch<true>(make_attn_args(p), sa_padded_head_dim(p->head_dim), stream);
}

// V^T in f16: B x Hk x Dp x Nk_pad halves.
static int64_t sm90_vt_bytes(const sa_attn_params* p) {
  return (int64_t)p->batch * p->kv_heads * sa_padded_head_dim(p->head_dim) * sa_round_up(p->kv_len, sa::cfg::kBlockK) *
         (int64_t)sizeof(__half);
}

extern "C" int64_t sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes(const sa_attn_params* p) {
  if (sa::check_attn_params(p, false, "sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes") != SA_OK) return -1;
  return sm90_vt_bytes(p);
}

extern "C" sa_status sa_attn_sm90_qk_int8_pv_fp16(const sa_attn_params* p, cudaStream_t stream) {
  using namespace sa;
  sa_status st = check_attn_params(p, false, "sa_attn_sm90_qk_int8_pv_fp16");
  if (st != SA_OK) return st;
  AttnArgs a = make_attn_args(p);
  const int dp = sa_padded_head_dim(p->head_dim);
  const int64_t bytes = sm90_vt_bytes(p);
  void* vt = p->workspace;
  cudaMemPool_t pool = nullptr;
  if (vt != nullptr) {  // the caller's (e.g. torch's allocator): its size and alignment are checked
    if (p->workspace_bytes < bytes)
      return set_error(SA_ERR_INVALID_ARGUMENT, "sa_attn_sm90_qk_int8_pv_fp16: workspace of %lld bytes, needs %lld",
                       (long long)p->workspace_bytes, (long long)bytes);
    if (reinterpret_cast<uintptr_t>(vt) % 16 != 0)
      return set_error(SA_ERR_INVALID_ARGUMENT, "sa_attn_sm90_qk_int8_pv_fp16: workspace is not 16-byte aligned");
  } else {
    SA_CUDA_CHECK(sm90::scratch_pool(&pool));
    SA_CUDA_CHECK(cudaMallocFromPoolAsync(&vt, (size_t)bytes, pool, stream));
  }
  dim3 grid(a.k_pad / 64, p->kv_heads, p->batch);
  if (dp == 128)
    sm90::transpose_v_f16_kernel<128><<<grid, 256, 0, stream>>>(p->v, static_cast<__half*>(vt), a.k_pad);
  else
    sm90::transpose_v_f16_kernel<64><<<grid, 256, 0, stream>>>(p->v, static_cast<__half*>(vt), a.k_pad);
  cudaError_t le = cudaGetLastError();
  if (le == cudaSuccess) {
    a.p.v.data = vt;  // the kernel reads V^T through p.v.data
    st = sm90::launch_dispatch<false>(a, dp, stream);
  }
  if (pool != nullptr) SA_CUDA_CHECK(cudaFreeAsync(vt, stream));  // stream-ordered: after the kernel
  if (le != cudaSuccess) return set_error(SA_ERR_CUDA, "launch of transpose_v_f16 failed: %s", cudaGetErrorString(le));
  return st;
}
