// The SageAttention forward on mma.sync, shared by the two P.V families:
//   S = (Q_int8 K_int8^T) * q_scale * k_scale * sm_scale * log2(e)  (mma m16n8k32 s8)
//   online softmax in the exp2 domain (running max m, running sum l)
//   O += P V  with P fp16 (mma m16n8k16, fp32 accumulation)         PV_FP8 = false
//          or P e4m3 scaled by 448 and V e4m3 per-channel scaled
//             (mma m16n8k32 e4m3 into a per-key-tile accumulator,
//              added to the fp32 output accumulator)                PV_FP8 = true
// One CTA = Frags<DP>::kCtaRows query rows of one (batch, head); keys are streamed
// in 64-key tiles through a cp.async ring of K (int8) and V tiles.
//   sm80/tile.cuh      shapes and the ring's shared memory
//   sm80/pipeline.cuh  Q into registers, K and V tiles through the cp.async ring
//   sm80/mma.cuh       Q.K^T (mma s8) and P.V (mma f16 / e4m3)
//   sm80/softmax.cuh   the online softmax and the P fragments
//   sm80/epilogue.cuh  O and LSE to global memory
// This file: the key loop that composes them, the two families' __global__
// wrappers and the launch.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>
#include <type_traits>
#include "sm80/epilogue.cuh"
#include "sm80/mma.cuh"
#include "sm80/pipeline.cuh"
#include "sm80/softmax.cuh"

namespace sa {

// The ring (dynamic shared memory), declared in namespace sa so that its
// symbol keeps the name it had (sa::smem) in the kernels' PTX.
extern __shared__ __align__(128) uint8_t smem[];

namespace sm80 {

template <int DP, bool CAUSAL, bool PV_FP8, typename OutT, bool F16ACC = false>
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
  using L = Smem<DP, PV_FP8>;
  constexpr int BK = cfg::kBlockK;
  constexpr int KS = Frags<DP>::KS, NT = Frags<DP>::NT, ON = Frags<DP>::ON, MT = Frags<DP>::MT;
  const sa_attn_params& p = args.p;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, tig = lane & 3;
  const int b = blockIdx.z, h = blockIdx.y;
  const int qt = CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;  // long rows first
  const int hk = h / (p.q_heads / p.kv_heads);
  const int q0 = qt * Frags<DP>::kCtaRows;
  const int wq0 = q0 + warp * Frags<DP>::kRowsPerWarp;  // first row of this warp; m-tile mt starts at wq0 + 16 mt
  // Variable-length batches: this batch's query rows and keys (sageattn.h).
  const int q_len = batch_len(p.q_seq_len, b, p.q_len);
  if (q0 >= q_len) return;                           // the whole CTA is padding of a shorter sequence
  const int v_rows = PV_FP8 ? 0 : view_len(p.v, b);  // fp16 path: V's own rows (its view)
  // kv_end: the keys this CTA visits, both the loop bound and the key mask.
  // Causal: clipped to the end of the tile of the CTA's last row; the causal
  // test masks every key past that row, so the clip never hides a valid key.
  int kv_end = batch_len(p.kv_seq_len, b, p.kv_len);
  if (CAUSAL) kv_end = min(kv_end, ((min(q0 + Frags<DP>::kCtaRows, q_len) - 1) / BK + 1) * BK);
  // Whether tile t has keys to visit.  The D>=128 kernels sit at the register
  // cap: they test kv_end alone (a tile count live beside it adds spills to the
  // loop, ptxas); D=64 has room for the count, which keeps its tile addressing
  // cheaper (fewer integer instructions per tile).
  const int n_tiles = (kv_end + BK - 1) / BK;
  auto has_tile = [&](int t) { return DP >= 128 ? t * BK < kv_end : t < n_tiles; };

  const size_t bhq = (size_t)b * p.q_heads + h;
  const size_t bhk = (size_t)b * p.kv_heads + hk;

  uint32_t qf[MT][KS][4];
  float qs[MT];
  load_q<DP>(args, bhq, wq0, g, tig, qf, qs);
  const int8_t* kbase = p.k_int8 + bhk * (size_t)args.k_pad * DP;
  const float* ksbase = p.k_scale + bhk * (size_t)(args.k_pad / BK) * 4;
  const KvLoader<DP, PV_FP8> kv(args, smem, kbase, b, hk, bhk, v_rows, tid);

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
    if (has_tile(s)) kv.load(s, s);
    ptx::cp_async_commit();
  }

  for (int t = 0; has_tile(t); ++t) {
    const float kscale = ksbase[t * 4 + tig];
    ptx::cp_async_wait<L::kStages - 2>();
    __syncthreads();  // tile t visible to all; slot of tile t-1 free
    {
      const int nt = t + L::kStages - 1;
      if (has_tile(nt)) kv.load(nt, nt % L::kStages);
      ptx::cp_async_commit();
    }
    const uint8_t* sK = smem + (t % L::kStages) * L::kStageBytes;
    const uint8_t* sV = sK + L::kKBytes;

    int32_t acc[MT][NT][4];
    mma_qk<DP, PV_FP8>(acc, qf, sK, lane, ScoreBias<PV_FP8>::kAccInit);

    uint32_t pa[MT][PV_FP8 ? 2 : 4][4];  // P as the A operand of the PV MMA
    float corr[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const float c = fmaxf(qs[mt] * kscale, 1e-30f);
      softmax_mtile<DP, CAUSAL, PV_FP8>(acc[mt], c, t, kv_end, wq0 + mt * 16, g, tig, m[mt], l[mt], o[mt], corr[mt],
                                        pa[mt]);
    }

    if constexpr (!PV_FP8) {
      mma_pv_f16<DP>(o, pa, sV, lane);
    } else {
      mma_pv_fp8<DP, F16ACC>(o, pa, corr, sV, lane);
    }
  }
  ptx::cp_async_wait<0>();

  store_output<DP, PV_FP8, OutT>(p, b, h, bhq, bhk, wq0, g, tig, q_len, o, m, l);
#endif
}

}  // namespace sm80

// The kernels keep the names each family's symbol_marker looks for
// (families.json): attn_pv_fp16_kernel, attn_pv_fp8_kernel.
template <int DP, bool CAUSAL, typename OutT>
__global__ void __launch_bounds__(cfg::kThreads, cfg::kMinBlocksPerSm)
    attn_pv_fp16_kernel(const __grid_constant__ AttnArgs args) {
  sm80::attn_body<DP, CAUSAL, false, OutT>(args);
}
template <int DP, bool CAUSAL, typename OutT>
__global__ void __launch_bounds__(cfg::kThreads, cfg::kMinBlocksPerSm)
    attn_pv_fp8_kernel(const __grid_constant__ AttnArgs args) {
  sm80::attn_body<DP, CAUSAL, true, OutT>(args);
}
// pv_accum_f16 (sageattn.h): each key tile's P.V accumulated in f16.
template <int DP, bool CAUSAL, typename OutT>
__global__ void __launch_bounds__(cfg::kThreads, cfg::kMinBlocksPerSm)
    attn_pv_fp8_f16acc_kernel(const __grid_constant__ AttnArgs args) {
  sm80::attn_body<DP, CAUSAL, true, OutT, true>(args);
}

namespace sm80 {

using KernelPtr = void (*)(AttnArgs);

// The launch's kernel K, opted in to `bytes` of dynamic shared memory and the
// carveout SAGEATTN_SMEM_PER_SM_KB asks for (opt_in_smem) first: each branch
// of launch_instance names it once.
template <auto K>
sa_status pick(KernelPtr& kern, int bytes) {
  kern = K;
  return opt_in_smem<K>(bytes, /*carveout_knob=*/true);
}

template <int DP, bool CAUSAL, bool PV_FP8, typename OutT>
sa_status launch_instance(const AttnArgs& a, cudaStream_t stream) {
  using L = Smem<DP, PV_FP8>;
  KernelPtr kern;
  sa_status st;
  if constexpr (PV_FP8) {
    if (a.p.pv_accum_f16)
      st = pick<attn_pv_fp8_f16acc_kernel<DP, CAUSAL, OutT>>(kern, L::kTotal);
    else
      st = pick<attn_pv_fp8_kernel<DP, CAUSAL, OutT>>(kern, L::kTotal);
  } else {
    st = pick<attn_pv_fp16_kernel<DP, CAUSAL, OutT>>(kern, L::kTotal);
  }
  if (st != SA_OK) return st;
  dim3 grid(a.q_pad / Frags<DP>::kCtaRows, a.p.q_heads, a.p.batch);
  kern<<<grid, cfg::kThreads, L::kTotal, stream>>>(a);
  SA_LAUNCH_CHECK(PV_FP8 ? "attn_qk_int8_pv_fp8" : "attn_qk_int8_pv_fp16");
  return SA_OK;
}

// Validation + the (head dim, causal, out dtype) dispatch of the attention kernel.
template <bool PV_FP8>
sa_status launch(const sa_attn_params* p, cudaStream_t stream) {
  const char* fn = PV_FP8 ? "sa_attn_qk_int8_pv_fp8" : "sa_attn_qk_int8_pv_fp16";
  sa_status st = check_attn_params(p, PV_FP8, fn);
  if (st != SA_OK) return st;
  const AttnArgs a = make_attn_args(p);
  const int dp = sa_padded_head_dim(p->head_dim);
  return dispatch_head_dim(dp, [&](auto d) {
    return dispatch_bool(p->causal != 0, [&](auto c) {
      return dispatch_dtype(p->out_dtype, [&](auto od) {
        using OutT = std::conditional_t<decltype(od)::value == SA_DTYPE_F16, __half, __nv_bfloat16>;
        return launch_instance<decltype(d)::value, decltype(c)::value != 0, PV_FP8, OutT>(a, stream);
      });
    });
  });
}

}  // namespace sm80
}  // namespace sa
