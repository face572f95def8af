// Family "quant" (sm80+): fused quantization of Q, K (with smoothing), V (fp8),
// per-channel statistics, and the C ABI's error state.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include "common.cuh"
#include "sageattn/config.cuh"
#include "sageattn/ptx.cuh"
#include "sageattn/sageattn.h"

namespace sa {

static thread_local char g_err[1024] = "";

sa_status set_error(sa_status s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof(g_err), fmt, ap);
  va_end(ap);
  return s;
}

template <int D>
struct DType;
template <>
struct DType<SA_DTYPE_F16> {
  using T = __half;
};
template <>
struct DType<SA_DTYPE_BF16> {
  using T = __nv_bfloat16;
};

__device__ __forceinline__ void load8(const __half* p, float (&x)[8]) {
  uint4 u = *reinterpret_cast<const uint4*>(p);
  const __half2* h = reinterpret_cast<const __half2*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = __half22float2(h[i]);
    x[2 * i] = f.x;
    x[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ void load8(const __nv_bfloat16* p, float (&x)[8]) {
  uint4 u = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = __bfloat1622float2(h[i]);
    x[2 * i] = f.x;
    x[2 * i + 1] = f.y;
  }
}

// Group of a row inside its quantization CTA, per granularity.
// Q (128 rows): per-thread: slice*8 + row%8 (rows g and g+8 of a 16-row slice
// share), per-warp: slice, per-block: 0.  K (64 rows): per-thread: (row%8)/2,
// otherwise 0.
template <bool IS_Q, int GRAN>
__device__ __forceinline__ int quant_group(int r) {
  if (GRAN == SA_GRAN_PER_BLOCK) return 0;
  if (IS_Q) {
    if (GRAN == SA_GRAN_PER_WARP) return r >> 4;
    return (r >> 4) * 8 + (r & 7);
  } else {
    if (GRAN == SA_GRAN_PER_WARP) return 0;
    return (r & 7) >> 1;
  }
}

__device__ __forceinline__ void atomic_max_float(float* addr, float v) {
  int* ai = reinterpret_cast<int*>(addr);
  int old = *ai;
  while (__int_as_float(old) < v) {
    int assumed = old;
    old = atomicCAS(ai, assumed, __float_as_int(v));
    if (old == assumed) break;
  }
}
__device__ __forceinline__ void atomic_min_float(float* addr, float v) {
  int* ai = reinterpret_cast<int*>(addr);
  int old = *ai;
  while (__int_as_float(old) > v) {
    int assumed = old;
    old = atomicCAS(ai, assumed, __float_as_int(v));
    if (old == assumed) break;
  }
}

// Rows one quantization CTA covers: K 64 (its scale tile); Q 128 for the
// per-block granularity (its group), else 64 (twice the CTAs, and the pass
// reaches the bandwidth of the K pass: its groups are 16 rows or fewer).
template <bool IS_Q, int GRAN>
__host__ __device__ constexpr int quant_rows() {
  return IS_Q ? (GRAN == SA_GRAN_PER_BLOCK ? cfg::kBlockQ : 64) : cfg::kBlockK;
}

// One CTA quantizes ROWS rows (quant_rows) of one (batch, head).
// Each thread keeps its 8-element chunks in registers between the amax pass
// and the quantize pass, so the input is read exactly once.
template <typename T, bool IS_Q, int GRAN, int DP>
__global__ void __launch_bounds__(cfg::kQuantThreads)
    quant_qk_kernel(sa_view x, const float* __restrict__ sum, int8_t* __restrict__ out, float* __restrict__ scale,
                    int n_pad) {
  constexpr int ROWS = quant_rows<IS_Q, GRAN>();
  constexpr int CPR = DP / 8;  // 16-byte chunks per row (input) / 8-byte chunks (output)
  constexpr int PER = ROWS * CPR / cfg::kQuantThreads;
  static_assert(PER >= 1 && (ROWS * CPR) % cfg::kQuantThreads == 0, "tile/thread mismatch");
  constexpr int NG = IS_Q ? ROWS / 2 : 4;  // Q: at most 8 groups per 16-row slice
  __shared__ float gmax[NG];
  __shared__ float mean_s[DP];

  const int tid = threadIdx.x;
  const int b = blockIdx.z, h = blockIdx.y;
  const int r0 = blockIdx.x * ROWS;
  const int len = view_len(x, b);  // rows past it (padding of a shorter sequence) quantize to zero
  if (tid < NG) gmax[tid] = 0.f;
  if (tid < DP)
    mean_s[tid] =
        (sum != nullptr && tid < x.dim && len > 0) ? sum[((size_t)b * x.heads + h) * x.dim + tid] / (float)len : 0.f;
  __syncthreads();

  const T* base = view_rows<T>(x, b, h);
  float v[PER][8];
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int c = i * cfg::kQuantThreads + tid;
    const int r = c / CPR, col = (c % CPR) * 8;
    const int row = r0 + r;
    if (row < len && col < x.dim) {
      load8(base + (size_t)row * x.stride_seq + col, v[i]);
#pragma unroll
      for (int e = 0; e < 8; ++e) v[i][e] -= mean_s[col + e];
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) v[i][e] = 0.f;
    }
    float am = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e) am = fmaxf(am, fabsf(v[i][e]));
    // amax is >= 0, so the int ordering of its bits is the float ordering.
    atomicMax(reinterpret_cast<int*>(&gmax[quant_group<IS_Q, GRAN>(r)]), __float_as_int(am));
  }
  __syncthreads();

  int8_t* obase = out + (((size_t)b * x.heads + h) * n_pad + r0) * DP;
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int c = i * cfg::kQuantThreads + tid;
    const int r = c / CPR, col = (c % CPR) * 8;
    const float am = gmax[quant_group<IS_Q, GRAN>(r)];
    const float inv = am > 0.f ? 127.f / am : 0.f;
    uint32_t w[2];
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      uint32_t acc = 0;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int q = __float2int_rn(v[i][4 * k + e] * inv);
        q = max(-127, min(127, q));
        acc |= (static_cast<uint32_t>(q) & 0xffu) << (8 * e);
      }
      w[k] = acc;
    }
    *reinterpret_cast<uint2*>(obase + (size_t)r * DP + col) = make_uint2(w[0], w[1]);
  }
  if (IS_Q) {
    if (tid < ROWS / 2) {  // ROWS/16 slices x 8 groups, replicated for coarse granularities
      const int slice = tid >> 3, g = tid & 7;
      scale[(((size_t)b * x.heads + h) * (n_pad / 16) + r0 / 16) * 8 + tid] =
          gmax[quant_group<IS_Q, GRAN>(slice * 16 + g)] / 127.f;
    }
  } else {
    if (tid < 4) {
      scale[(((size_t)b * x.heads + h) * (n_pad / cfg::kBlockK) + blockIdx.x) * 4 + tid] =
          gmax[quant_group<IS_Q, GRAN>(2 * tid)] / 127.f;
    }
  }
}

template <int DP>
__global__ void init_stats_kernel(float* sum, float* mx, float* mn, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    sum[i] = 0.f;
    if (mx) mx[i] = -INFINITY;
    if (mn) mn[i] = INFINITY;
  }
}

// Per-channel sum (and, when MINMAX, max/min) over kStatRows rows, merged into
// global memory with atomics.  Each thread streams its 16-byte column chunk down
// the rows with several loads in flight (the pass is bandwidth-bound).
template <typename T, int DP, bool MINMAX>
__global__ void __launch_bounds__(cfg::kQuantThreads)
    channel_stats_kernel(sa_view x, float* sum, float* mx, float* mn) {
  constexpr int TPR = DP / 8;                   // threads per row
  constexpr int RP = cfg::kQuantThreads / TPR;  // rows in parallel
  constexpr int NS = MINMAX ? 3 : 1;
  __shared__ float s_red[NS][RP][DP];
  const int tid = threadIdx.x;
  const int cc = tid % TPR, rr = tid / TPR;
  const int b = blockIdx.z, h = blockIdx.y;
  const int r0 = blockIdx.x * cfg::kStatRows;
  const int len = view_len(x, b);
  if (r0 >= len) return;  // past this sequence (CTA-uniform): the initialised outputs stand
  const int nrows = min(cfg::kStatRows, len - r0);
  const T* base = view_rows<T>(x, b, h);
  float ls[8], lmx[8], lmn[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    ls[e] = 0.f;
    lmx[e] = -INFINITY;
    lmn[e] = INFINITY;
  }
  const int col = cc * 8;
  if (col < x.dim) {
#pragma unroll 4
    for (int r = rr; r < nrows; r += RP) {
      float v[8];
      load8(base + (size_t)(r0 + r) * x.stride_seq + col, v);
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        ls[e] += v[e];
        if (MINMAX) {
          lmx[e] = fmaxf(lmx[e], v[e]);
          lmn[e] = fminf(lmn[e], v[e]);
        }
      }
    }
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    s_red[0][rr][col + e] = ls[e];
    if constexpr (MINMAX) {
      s_red[1][rr][col + e] = lmx[e];
      s_red[2][rr][col + e] = lmn[e];
    }
  }
  __syncthreads();
  if (tid < x.dim) {
    float a = 0.f, m1 = -INFINITY, m2 = INFINITY;
    for (int r = 0; r < RP; ++r) {
      a += s_red[0][r][tid];
      if constexpr (MINMAX) {
        m1 = fmaxf(m1, s_red[1][r][tid]);
        m2 = fminf(m2, s_red[2][r][tid]);
      }
    }
    const size_t o = ((size_t)b * x.heads + h) * x.dim + tid;
    atomicAdd(sum + o, a);
    if constexpr (MINMAX) {
      if (mx) atomic_max_float(mx + o, m1);
      if (mn) atomic_min_float(mn + o, m2);
    }
  }
}

__host__ __device__ constexpr int v_key_perm(int p) {
  return (p & 3) < 2 ? 2 * (p >> 2) + (p & 3) : 8 + 2 * (p >> 2) + ((p & 3) - 2);
}

// V -> e4m3, transposed [Dp, Nk_pad], keys permuted within groups of 16 so
// that one 32-bit word of a V^T row is the B fragment of m16n8k32 for the P
// fragment built in registers from the S accumulators.
template <typename T, int DP>
__global__ void __launch_bounds__(cfg::kQuantThreads) quant_v_fp8_kernel(sa_quant_v_fp8_params p, int n_pad) {
  constexpr int BK = cfg::kBlockK;
  constexpr int CPR = DP / 8;
  __shared__ float tile[BK][DP + 1];
  __shared__ float s_inv[DP], s_mean[DP];
  const sa_view& x = p.v;
  const int tid = threadIdx.x;
  const int b = blockIdx.z, h = blockIdx.y;
  const int k0 = blockIdx.x * BK;
  const size_t bh = (size_t)b * x.heads + h;
  const int len = view_len(x, b);  // keys past it are stored as zeros
  if (tid < DP) {
    float mean = 0.f, inv = 0.f, amax = 0.f;
    if (tid < x.dim && len > 0) {  // an empty sequence: scale 0 (its statistics are +-inf)
      const size_t o = bh * x.dim + tid;
      mean = p.smooth_v ? p.v_sum[o] / (float)len : 0.f;
      amax = fmaxf(fabsf(p.v_max[o] - mean), fabsf(p.v_min[o] - mean));
      inv = amax > 0.f ? cfg::kFp8Max / amax : 0.f;
    }
    s_inv[tid] = inv;
    s_mean[tid] = mean;
    if (blockIdx.x == 0) {
      p.v_scale[bh * DP + tid] = amax / cfg::kFp8Max;
      if (p.v_mean) p.v_mean[bh * DP + tid] = mean;
    }
  }
  const T* base = view_rows<T>(x, b, h);
#pragma unroll
  for (int i = 0; i < BK * CPR / cfg::kQuantThreads; ++i) {
    const int c = i * cfg::kQuantThreads + tid;
    const int r = c / CPR, col = (c % CPR) * 8;
    float v[8];
    if (k0 + r < len && col < x.dim) {
      load8(base + (size_t)(k0 + r) * x.stride_seq + col, v);
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = 0.f;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) tile[r][col + e] = v[e];
  }
  __syncthreads();
  // units: (dim d, 16-key group grp)
#pragma unroll
  for (int i = 0; i < DP * 4 / cfg::kQuantThreads; ++i) {
    const int u = i * cfg::kQuantThreads + tid;
    const int d = u >> 2, grp = u & 3;
    const float inv = s_inv[d], mean = s_mean[d];
    uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      float f[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = grp * 16 + v_key_perm(q * 4 + e);
        f[e] = (k0 + key < len) ? (tile[key][d] - mean) * inv : 0.f;
      }
      w[q] = ptx::pack_e4m3x4(f[0], f[1], f[2], f[3]);
    }
    *reinterpret_cast<uint4*>(p.v_fp8 + (bh * DP + d) * (size_t)n_pad + k0 + grp * 16) =
        make_uint4(w[0], w[1], w[2], w[3]);
  }
}

}  // namespace sa

using namespace sa;

extern "C" {

const char* sa_last_error_message(void) { return sa::g_err; }

const char* sa_status_string(sa_status s) {
  switch (s) {
    case SA_OK:
      return "ok";
    case SA_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case SA_ERR_UNSUPPORTED:
      return "unsupported";
    case SA_ERR_CUDA:
      return "CUDA error";
  }
  return "unknown status";
}

int sa_padded_head_dim(int head_dim) {
  if (head_dim <= 0 || head_dim > 128) return 0;
  return head_dim <= 64 ? 64 : 128;
}

int64_t sa_round_up(int64_t n, int64_t tile) { return (n + tile - 1) / tile * tile; }

int sa_v_key_perm(int p) { return sa::v_key_perm(p & 15); }

sa_status sa_quant_q(const sa_quant_q_params* p, cudaStream_t stream) {
  SA_CHECK_ARG(p != nullptr, "sa_quant_q: null params");
  sa_status st = check_view(p->q, "q");
  if (st != SA_OK) return st;
  SA_CHECK_ARG(p->q_int8 && p->q_scale, "sa_quant_q: null output pointer");
  const int dp = sa_padded_head_dim(p->q.dim);
  const int n_pad = (int)sa_round_up(p->q.seq, cfg::kBlockQ);
  SA_CHECK_ARG(p->q.heads <= 65535 && p->q.batch <= 65535, "q: too many heads/batches for the grid");
  return dispatch_dtype(p->q.dtype, [&](auto dt) {
    using T = typename DType<decltype(dt)::value>::T;
    return dispatch_gran(p->granularity, [&](auto g) {
      const dim3 grid(n_pad / quant_rows<true, decltype(g)::value>(), p->q.heads, p->q.batch);
      return dispatch_head_dim(dp, [&](auto d) {
        quant_qk_kernel<T, true, decltype(g)::value, decltype(d)::value>
            <<<grid, cfg::kQuantThreads, 0, stream>>>(p->q, nullptr, p->q_int8, p->q_scale, n_pad);
        SA_LAUNCH_CHECK("quant_q");
        return SA_OK;
      });
    });
  });
}

sa_status sa_channel_stats(const sa_channel_stats_params* p, cudaStream_t stream) {
  SA_CHECK_ARG(p != nullptr, "sa_channel_stats: null params");
  sa_status st = check_view(p->x, "x");
  if (st != SA_OK) return st;
  SA_CHECK_ARG(p->sum != nullptr, "sa_channel_stats: sum is required");
  const int dp = sa_padded_head_dim(p->x.dim);
  const int n = p->x.batch * p->x.heads * p->x.dim;
  init_stats_kernel<0><<<(n + 255) / 256, 256, 0, stream>>>(p->sum, p->max, p->min, n);
  SA_LAUNCH_CHECK("init_stats");
  dim3 grid((p->x.seq + cfg::kStatRows - 1) / cfg::kStatRows, p->x.heads, p->x.batch);
  return dispatch_dtype(p->x.dtype, [&](auto dt) {
    using T = typename DType<decltype(dt)::value>::T;
    return dispatch_head_dim(dp, [&](auto d) {
      if (p->max != nullptr || p->min != nullptr) {
        channel_stats_kernel<T, decltype(d)::value, true>
            <<<grid, cfg::kQuantThreads, 0, stream>>>(p->x, p->sum, p->max, p->min);
      } else {
        channel_stats_kernel<T, decltype(d)::value, false>
            <<<grid, cfg::kQuantThreads, 0, stream>>>(p->x, p->sum, nullptr, nullptr);
      }
      SA_LAUNCH_CHECK("channel_stats");
      return SA_OK;
    });
  });
}

sa_status sa_quant_k(const sa_quant_k_params* p, cudaStream_t stream) {
  SA_CHECK_ARG(p != nullptr, "sa_quant_k: null params");
  sa_status st = check_view(p->k, "k");
  if (st != SA_OK) return st;
  SA_CHECK_ARG(p->k_int8 && p->k_scale, "sa_quant_k: null output pointer");
  const int dp = sa_padded_head_dim(p->k.dim);
  const int n_pad = (int)sa_round_up(p->k.seq, cfg::kBlockK);
  dim3 grid(n_pad / cfg::kBlockK, p->k.heads, p->k.batch);
  return dispatch_dtype(p->k.dtype, [&](auto dt) {
    using T = typename DType<decltype(dt)::value>::T;
    return dispatch_gran(p->granularity, [&](auto g) {
      return dispatch_head_dim(dp, [&](auto d) {
        quant_qk_kernel<T, false, decltype(g)::value, decltype(d)::value>
            <<<grid, cfg::kQuantThreads, 0, stream>>>(p->k, p->k_sum, p->k_int8, p->k_scale, n_pad);
        SA_LAUNCH_CHECK("quant_k");
        return SA_OK;
      });
    });
  });
}

sa_status sa_quant_v_fp8(const sa_quant_v_fp8_params* p, cudaStream_t stream) {
  SA_CHECK_ARG(p != nullptr, "sa_quant_v_fp8: null params");
  sa_status st = check_view(p->v, "v");
  if (st != SA_OK) return st;
  SA_CHECK_ARG(p->v_sum && p->v_max && p->v_min, "sa_quant_v_fp8: v_sum, v_max, v_min are required");
  SA_CHECK_ARG(p->v_fp8 && p->v_scale, "sa_quant_v_fp8: null output pointer");
  SA_CHECK_ARG(!p->smooth_v || p->v_mean, "sa_quant_v_fp8: smooth_v needs v_mean");
  const int dp = sa_padded_head_dim(p->v.dim);
  const int n_pad = (int)sa_round_up(p->v.seq, cfg::kBlockK);
  dim3 grid(n_pad / cfg::kBlockK, p->v.heads, p->v.batch);
  return dispatch_dtype(p->v.dtype, [&](auto dt) {
    using T = typename DType<decltype(dt)::value>::T;
    return dispatch_head_dim(dp, [&](auto d) {
      quant_v_fp8_kernel<T, decltype(d)::value><<<grid, cfg::kQuantThreads, 0, stream>>>(*p, n_pad);
      SA_LAUNCH_CHECK("quant_v_fp8");
      return SA_OK;
    });
  });
}

}  // extern "C"
