// Family "quant" (sm80+): fused quantization of Q, K (with smoothing), V (fp8),
// per-channel statistics.  The C ABI's error state is in abi.cu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cmath>
#include <cstdio>
#include "common.cuh"
#include "config.cuh"
#include "sageattn/ptx.cuh"
#include "sageattn/sageattn.h"

namespace sa {

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

__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Group of a row inside its quantization CTA, per granularity (a value of the
// call, not of the kernel: one kernel serves every granularity of a tile size).
// Q: per-thread: slice*8 + row%8 (rows g and g+8 of a 16-row slice share),
// per-warp: slice, per-block: 0 (its tile is the 128-row group).  K (64 rows):
// per-thread: (row%8)/2, otherwise 0 (one scale per 64-key tile).
template <bool IS_Q>
__device__ __forceinline__ int quant_group(int gran, int r) {
  if (gran == SA_GRAN_PER_BLOCK) return 0;
  if (IS_Q) return gran == SA_GRAN_PER_WARP ? r >> 4 : (r >> 4) * 8 + (r & 7);
  return gran == SA_GRAN_PER_WARP ? 0 : (r & 7) >> 1;
}

// Rows one Q quantization CTA covers: 128 for the per-block granularity (its
// group), else 64 (twice the CTAs, and the pass reaches the bandwidth of the K
// pass: its groups are 16 rows or fewer).  A K CTA covers 64 (its scale tile).
constexpr int q_rows(int gran) { return gran == SA_GRAN_PER_BLOCK ? cfg::kBlockQ : 64; }

// Shared memory of one Q or K quantization tile of ROWS rows: the tile as read,
// the groups' absolute maxima and the channel means.
template <typename T, bool IS_Q, int ROWS, int DP>
struct QkSmem {
  static constexpr int kGroups = IS_Q ? ROWS / 2 : 4;  // Q: at most 8 groups per 16-row slice
  alignas(16) T raw[ROWS * DP];                        // rows of DP elements (zeros past the sequence or head dim)
  float gmax[kGroups];
  float mean[DP];
};

// cp.async groups still in flight allowed, 0 or 1, as a run-time value (the
// tile loops below wait for one tile's group while the next may fly).
__device__ __forceinline__ void cp_async_wait_upto(int n) {
  if (n >= 1)
    ptx::cp_async_wait<1>();
  else
    ptx::cp_async_wait<0>();
}

// One CTA quantizes ROWS rows of one (batch, head) a tile: tiles tile0 to
// tile0 + nt - 1 (nt <= NT, at most 2; one CTA per tile but the K and V
// launch's short heads, which share a CTA's setup between two).
// Each tile is copied to shared memory with cp.async, all of them at once (no
// registers held while the loads are in flight, so more CTAs fit an SM and
// more bytes are in flight: the pass is bandwidth-bound), then read there
// twice: for the groups' maxima and to quantize.  The input is read from
// global memory once.  The channel means (from `sum`, K's sums over the
// sequence; NULL: none) are in sm[0].
template <typename T, bool IS_Q, int ROWS, int DP, int NT = 1>
__device__ __forceinline__ void quant_qk_tiles(const sa_view& x, int gran, const float* __restrict__ sum,
                                               int8_t* __restrict__ out, float* __restrict__ scale, int n_pad, int b,
                                               int h, int tile0, int nt, QkSmem<T, IS_Q, ROWS, DP> (&sm)[NT]) {
  static_assert(NT == 1 || NT == 2, "cp_async_wait_upto counts to 1");
  constexpr int CPR = DP / 8;  // 16-byte chunks per row (input) / 8-byte chunks (output)
  constexpr int PER = ROWS * CPR / cfg::kQuantThreads;
  static_assert(PER >= 1 && (ROWS * CPR) % cfg::kQuantThreads == 0, "tile/thread mismatch");
  constexpr int NG = QkSmem<T, IS_Q, ROWS, DP>::kGroups;
  // Lanes that read one row, aligned: chunk c is lane c % 32 and a row starts
  // at a multiple of CPR, so the largest power of two dividing CPR (at most a
  // warp) gives segments of consecutive lanes that never straddle two rows.
  constexpr int kRowLanes = (CPR & -CPR) < 32 ? (CPR & -CPR) : 32;

  const int tid = threadIdx.x;
  const int len = view_len(x, b);  // rows past it (padding of a shorter sequence) quantize to zero
  const T* base = view_rows<T>(x, b, h);
  for (int j = 0; j < nt; ++j) {  // one cp.async group a tile
    const int r0 = (tile0 + j) * ROWS;
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      const int c = i * cfg::kQuantThreads + tid;
      const int r = c / CPR, col = (c % CPR) * 8;
      const bool in = r0 + r < len && col < x.dim;
      ptx::cp_async_16(sm[j].raw + r * DP + col, in ? base + (size_t)(r0 + r) * x.stride_seq + col : base, in);
    }
    ptx::cp_async_commit();
  }
  if (tid < NG)
    for (int j = 0; j < nt; ++j) sm[j].gmax[tid] = 0.f;
  if (tid < DP)
    sm[0].mean[tid] =
        (sum != nullptr && tid < x.dim && len > 0) ? sum[((size_t)b * x.heads + h) * x.dim + tid] / (float)len : 0.f;
  const float* mean = sm[0].mean;

#pragma unroll 1
  for (int j = 0; j < nt; ++j) {
    cp_async_wait_upto(nt - 1 - j);  // tile j has landed
    __syncthreads();
    const int tile = tile0 + j, r0 = tile * ROWS;
    const T* raw = sm[j].raw;
    float* gmax = sm[j].gmax;
    // Chunk i of this thread, less the channel means (zeros outside the data).
    auto chunk = [&](int i, float(&v)[8]) {
      const int c = i * cfg::kQuantThreads + tid;
      const int r = c / CPR, col = (c % CPR) * 8;
      if (r0 + r < len && col < x.dim) {
        load8(raw + r * DP + col, v);
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] -= mean[col + e];
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] = 0.f;
      }
    };
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      const int r = (i * cfg::kQuantThreads + tid) / CPR;
      float v[8];
      chunk(i, v);
      // The chunk's maximum, then the row's over its lanes, then one
      // shared-memory atomic per row segment: a group's atomics from every lane
      // of a warp serialise.
      float am = 0.f;
#pragma unroll
      for (int e = 0; e < 8; ++e) am = fmaxf(am, fabsf(v[e]));
#pragma unroll
      for (int o = kRowLanes / 2; o > 0; o >>= 1) am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, o));
      // amax is >= 0, so the int ordering of its bits is the float ordering.
      if ((tid & (kRowLanes - 1)) == 0)
        atomicMax(reinterpret_cast<int*>(&gmax[quant_group<IS_Q>(gran, r)]), __float_as_int(am));
    }
    __syncthreads();

    int8_t* obase = out + (((size_t)b * x.heads + h) * n_pad + r0) * DP;
#pragma unroll
    for (int i = 0; i < PER; ++i) {
      const int c = i * cfg::kQuantThreads + tid;
      const int r = c / CPR, col = (c % CPR) * 8;
      const float am = gmax[quant_group<IS_Q>(gran, r)];
      const float inv = am > 0.f ? 127.f / am : 0.f;
      float v[8];
      chunk(i, v);
      // |v| <= am, so v * inv stays within +-127 (and rounds there): cvt's
      // saturation to [-128, 127] never acts, and NaN gives 0 as before.
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] *= inv;
      *reinterpret_cast<uint2*>(obase + (size_t)r * DP + col) =
          make_uint2(ptx::pack_s8x4(v[0], v[1], v[2], v[3]), ptx::pack_s8x4(v[4], v[5], v[6], v[7]));
    }
    if (IS_Q) {
      if (tid < ROWS / 2) {  // ROWS/16 slices x 8 groups, replicated for coarse granularities
        const int slice = tid >> 3, g = tid & 7;
        scale[(((size_t)b * x.heads + h) * (n_pad / 16) + r0 / 16) * 8 + tid] =
            gmax[quant_group<IS_Q>(gran, slice * 16 + g)] / 127.f;
      }
    } else {
      if (tid < 4) {
        scale[(((size_t)b * x.heads + h) * (n_pad / cfg::kBlockK) + tile) * 4 + tid] =
            gmax[quant_group<IS_Q>(gran, 2 * tid)] / 127.f;
      }
    }
  }
}

// Head dims above 128: a Q tile (128 rows of up to 256 elements) is more than
// the 48 KiB a kernel may declare statically, so those instances take their
// working memory as dynamic shared memory (opt_in_smem, launched with
// dyn_smem_bytes).  The smaller ones keep their static declaration.
template <typename S>
constexpr bool kDynSmem = sizeof(S) > 48 * 1024;
extern __shared__ __align__(16) uint8_t quant_dyn_smem[];
template <typename S>
__device__ __forceinline__ S& dyn_smem() {
  return *reinterpret_cast<S*>(quant_dyn_smem);
}
// The dynamic shared memory to launch Kernel with (0: it declares its own),
// after the opt-in above 48 KiB that such a launch needs.
template <typename S, auto Kernel>
static sa_status dyn_smem_bytes(size_t* bytes) {
  *bytes = 0;
  if constexpr (kDynSmem<S>) {
    sa_status st = opt_in_smem<Kernel>((int)sizeof(S));
    if (st != SA_OK) return st;
    *bytes = sizeof(S);
  }
  return SA_OK;
}

// Channel maxima and minima merged across CTAs as unsigned integers: `ordered`
// maps floats to integers of the same order, all above 0 (a zeroed buffer is
// below every value: one memset initialises it), and the minimum is kept as the
// maximum of the negated values.  atomicMax on integers needs no CAS loop.
__device__ __forceinline__ unsigned ordered(float f) {
  const unsigned u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float from_ordered(unsigned k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

// Where a chunk's channel statistics go: sums as floats, the maximum and the
// negated minimum as `ordered` integers, all initialised to zero.
struct StatsOut {
  float* sum;
  float* mx;  // when MINMAX
  float* mn;  // when MINMAX
};

template <bool MINMAX>
struct StatsSmem {
  static constexpr int kRP = cfg::kQuantThreads / 16;  // rows in parallel at DP = 128 (2048 floats per statistic)
  float red[MINMAX ? 3 : 1][kRP][128];
};
// The column layout the statistics pass uses for padded head dim DP: a power
// of two, so that its threads tile the rows exactly (192 runs as 256, the
// columns past the head dim idle): head dim 192 runs the statistics code of
// the 256 instance.
constexpr int stats_dp(int dp) { return dp == 192 ? 256 : dp; }

// Per-channel sum (and, when MINMAX, max/min) over kStatRows rows (chunk
// `chunk` of one (batch, head)), merged into global memory with atomics.  Each
// thread streams its 16-byte column chunk down the rows with several loads in
// flight (the pass is bandwidth-bound).
template <typename T, int DP, bool MINMAX>
__device__ __forceinline__ void stats_chunk(const sa_view& x, const StatsOut& out, int b, int h, int chunk,
                                            StatsSmem<MINMAX>& sm) {
  constexpr int TPR = DP / 8;                   // threads per row
  constexpr int RP = cfg::kQuantThreads / TPR;  // rows in parallel
  static_assert(DP * RP == 128 * StatsSmem<MINMAX>::kRP, "the reduction tile fills StatsSmem");
  float(*red)[RP][DP] = reinterpret_cast<float(*)[RP][DP]>(&sm.red[0][0][0]);
  const int tid = threadIdx.x;
  const int cc = tid % TPR, rr = tid / TPR;
  const int r0 = chunk * cfg::kStatRows;
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
    red[0][rr][col + e] = ls[e];
    if constexpr (MINMAX) {
      red[1][rr][col + e] = lmx[e];
      red[2][rr][col + e] = lmn[e];
    }
  }
  __syncthreads();
  if (tid < x.dim) {
    float a = 0.f, m1 = -INFINITY, m2 = INFINITY;
    for (int r = 0; r < RP; ++r) {
      a += red[0][r][tid];
      if constexpr (MINMAX) {
        m1 = fmaxf(m1, red[1][r][tid]);
        m2 = fminf(m2, red[2][r][tid]);
      }
    }
    const size_t o = ((size_t)b * x.heads + h) * x.dim + tid;
    atomicAdd(out.sum + o, a);
    if constexpr (MINMAX) {
      atomicMax(reinterpret_cast<unsigned*>(out.mx) + o, ordered(m1));
      atomicMax(reinterpret_cast<unsigned*>(out.mn) + o, ordered(-m2));
    }
  }
}

// V's half of a call: its statistics (stats_chunk's, ordered) and outputs.
struct VArgs {
  sa_view v;
  const float* v_sum;
  const float* v_max;  // ordered integers
  const float* v_min;  // ordered integers, of the negated values
  int smooth_v;        // subtract the channel mean before quantizing
  uint8_t* v_fp8;
  float* v_scale;
  float* v_mean;    // or NULL when !smooth_v
  float scale_max;  // the e4m3 range V is scaled to (0: cfg::kFp8Max)
};

__host__ __device__ constexpr int v_key_perm(int p) {
  return (p & 3) < 2 ? 2 * (p >> 2) + (p & 3) : 8 + 2 * (p >> 2) + ((p & 3) - 2);
}
// The same order as word w, byte e of a permuted 16-key group: key v_key_perm(4 w + e).
__host__ __device__ constexpr int v_key_at(int w, int e) { return 2 * w + (e & 1) + 8 * (e >> 1); }
constexpr bool v_key_at_is_perm() {
  for (int p = 0; p < 16; ++p)
    if (v_key_at(p >> 2, p & 3) != v_key_perm(p)) return false;
  return true;
}
static_assert(v_key_at_is_perm(), "v_key_at restates v_key_perm");

// The V tile as read: 64 key rows of DP elements in 16-byte chunks, chunk c
// of row `key` at position c ^ (key % 8), so that the eight rows of one
// transposing ldmatrix (eight consecutive keys, one chunk) fall in different banks.
template <typename T, int DP>
struct VSmem {
  static_assert(DP / 8 >= 8, "the swizzle needs 8 chunks per row");
  alignas(16) T raw[cfg::kBlockK * DP];
  float inv[DP], mean[DP];
  __device__ __forceinline__ static int at(int key, int d) {
    return key * DP + ((((d >> 3) ^ (key & 7))) << 3) + (d & 7);
  }
};

// V -> e4m3, transposed [Dp, Nk_pad], keys permuted within groups of 16
// so that one 32-bit word of a V^T row is the B fragment of m16n8k32 for the P
// fragment built in registers from the S accumulators.  One CTA: key tiles
// tile0 to tile0 + nt - 1 (nt <= NT, at most 2) of one (batch, head), all
// copied at once; the channels' factors once, in sm[0].
template <typename T, int DP, int NT = 1>
__device__ __forceinline__ void quant_v_tiles(const VArgs& p, int n_pad, int b, int h, int tile0, int nt,
                                              VSmem<T, DP> (&sm)[NT]) {
  static_assert(NT == 1 || NT == 2, "cp_async_wait_upto counts to 1");
  constexpr int BK = cfg::kBlockK;
  constexpr int CPR = DP / 8;
  const sa_view& x = p.v;
  const int tid = threadIdx.x;
  const size_t bh = (size_t)b * x.heads + h;
  const int len = view_len(x, b);  // keys past it are stored as zeros
  const T* base = view_rows<T>(x, b, h);
  for (int j = 0; j < nt; ++j) {  // one cp.async group a tile
    const int k0 = (tile0 + j) * BK;
#pragma unroll
    for (int i = 0; i < BK * CPR / cfg::kQuantThreads; ++i) {
      const int c = i * cfg::kQuantThreads + tid;
      const int r = c / CPR, col = (c % CPR) * 8;
      const bool in = k0 + r < len && col < x.dim;
      ptx::cp_async_16(sm[j].raw + VSmem<T, DP>::at(r, col), in ? base + (size_t)(k0 + r) * x.stride_seq + col : base,
                       in);
    }
    ptx::cp_async_commit();
  }
  const float range = p.scale_max > 0.f ? p.scale_max : cfg::kFp8Max;  // the e4m3 range V is scaled to
  if (tid < DP) {
    float mean = 0.f, inv = 0.f, amax = 0.f;
    if (tid < x.dim && len > 0) {  // an empty sequence: scale 0 (its statistics are +-inf)
      const size_t o = bh * x.dim + tid;
      const float vmax = from_ordered(reinterpret_cast<const unsigned*>(p.v_max)[o]);
      const float vmin = -from_ordered(reinterpret_cast<const unsigned*>(p.v_min)[o]);
      mean = p.smooth_v ? p.v_sum[o] / (float)len : 0.f;
      amax = fmaxf(fabsf(vmax - mean), fabsf(vmin - mean));
      inv = amax > 0.f ? range / amax : 0.f;
    }
    sm[0].inv[tid] = inv;
    sm[0].mean[tid] = mean;
    if (tile0 == 0) {
      p.v_scale[bh * DP + tid] = amax / range;
      if (p.v_mean) p.v_mean[bh * DP + tid] = mean;
    }
  }
  const float* cinv = sm[0].inv;
  const float* cmean = sm[0].mean;
  // Items: (16-dim block db, 16-key group grp), one per warp at a time.  One
  // transposing ldmatrix.x4 gives lane t, for dims dA = 16 db + t/4 and
  // dB = dA + 8, keys 2q, 2q+1 (matrices 0, 2) and 8 + 2q, 9 + 2q (1, 3) of
  // the group, q = t % 4: exactly word q of the permuted 16-key group
  // (v_key_perm) for each of the two dims.
  const int warp = tid >> 5, lane = tid & 31;
  const int q = lane & 3, dl = lane >> 2;
  constexpr int kItems = DP / 16 * 4;
  constexpr int kWarps = cfg::kQuantThreads / 32;
#pragma unroll 1
  for (int j = 0; j < nt; ++j) {
    cp_async_wait_upto(nt - 1 - j);  // tile j has landed
    __syncthreads();
    const int k0 = (tile0 + j) * BK;
    const T* raw = sm[j].raw;
#pragma unroll
    for (int it = warp; it < kItems; it += kWarps) {
      const int db = it >> 2, grp = it & 3;
      const int mrow = lane & 7, mat = lane >> 3;
      const int key = grp * 16 + (mat & 1) * 8 + mrow;
      const int col = db * 16 + (mat >> 1) * 8;
      uint32_t r[4];
      ptx::ldmatrix_x4_trans(r[0], r[1], r[2], r[3], raw + VSmem<T, DP>::at(key, col));
      const int kk = k0 + grp * 16;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int d = db * 16 + half * 8 + dl;
        const float inv = cinv[d], mean = cmean[d];
        const uint32_t lo = r[2 * half], hi = r[2 * half + 1];
        const T* hl = reinterpret_cast<const T*>(&lo);
        const T* hh = reinterpret_cast<const T*>(&hi);
        const T x[4] = {hl[0], hl[1], hh[0], hh[1]};
        float f[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) f[e] = (kk + v_key_at(q, e) < len) ? (to_float(x[e]) - mean) * inv : 0.f;
        *reinterpret_cast<uint32_t*>(p.v_fp8 + (bh * DP + d) * (size_t)n_pad + kk + 4 * q) =
            ptx::pack_e4m3x4(f[0], f[1], f[2], f[3]);
      }
    }
  }
}

// ---- Q, K and V of one call quantized in two launches (sa_quant_qkv).
// Launch 1: the quantization of Q, which needs no statistics, then the channel
// statistics of K (sums) and V (sums, maxima, minima); launch 2: K and V.  A
// launch's CTAs are a flat list of segments (one kind of tile each), so small
// shapes still fill the GPU and no pass waits on the tail of another.  Launch 1
// reads K and V last and launch 2 takes its tiles in the reverse order, V's
// last head first: what launch 1 read last is still in L2 when launch 2 reads
// it again, and at short lengths much of K and V is.
// (A one-pass kernel, in which each chunk of keys waited for its head's
// statistics and was then quantized from L2, measured slower: BENCHMARKS.md, history.)
struct Segment {
  int tiles, heads, batch;  // tiles per (batch, head)
  __host__ __device__ int count() const { return tiles * heads * batch; }
};
struct Place {
  int b, h, t;
};
__device__ __forceinline__ Place place(const Segment& s, int i) {
  const int bh = i / s.tiles;
  return Place{bh / s.heads, bh % s.heads, i % s.tiles};
}

struct QkvArgs {
  sa_quant_qkv_params p;
  VArgs v;
  StatsOut k_stats, v_stats;
  Segment k_chunks, v_chunks, q_tiles;  // launch 1 (tiles 0 when absent)
  Segment k_tiles, v_tiles;             // launch 2: CTAs per (batch, head), of kv_tiles_a_cta key tiles each
  int q_pad, k_pad;
};

template <typename T, int QROWS, int DP>
union StatsQSmem {
  StatsSmem<false> k;
  StatsSmem<true> v;
  QkSmem<T, true, QROWS, DP> q[1];
};
template <typename T, int DP, int NT>
union KVSmem {
  QkSmem<T, false, cfg::kBlockK, DP> k[NT];
  VSmem<T, DP> v[NT];
};
// Key tiles a CTA of the K and V launch takes: two at head dim 64, so that a
// CTA's setup (the tile's place, pointers, the channels' factors) is shared
// between two tiles and both are in flight at once; one above.  On the H200 (B4
// H32, 2026-11-30): at head dim 64 the launch 25.1 -> 23.2 us at 1k (ncu),
// quant_qkv 557 -> 520 us at 16k, the call 1-3 % faster at 1k-2k; at head dim
// 128 two were slower (40.3 -> 43.8 us) and at 192 / 256 two pass the 48 KiB a
// kernel declares statically.
template <int DP>
constexpr int kv_tiles_a_cta() {
  return DP == 64 ? 2 : 1;
}

template <typename T, int QROWS, int DP>
__device__ __forceinline__ void qkv_stats_q(const QkvArgs& a, StatsQSmem<T, QROWS, DP>& sm) {
  ptx::griddep_launch_dependents();  // launch 2 may take the SMs this launch's tail leaves
  // The list [K chunks, V chunks, Q tiles] with the Q tiles taken first.
  const int stats = a.k_chunks.count() + a.v_chunks.count();
  int i = (int)blockIdx.x < a.q_tiles.count() ? (int)blockIdx.x + stats : (int)blockIdx.x - a.q_tiles.count();
  if (i < a.k_chunks.count()) {
    const Place w = place(a.k_chunks, i);
    stats_chunk<T, stats_dp(DP), false>(a.p.k, a.k_stats, w.b, w.h, w.t, sm.k);
    return;
  }
  i -= a.k_chunks.count();
  if (i < a.v_chunks.count()) {
    const Place w = place(a.v_chunks, i);
    stats_chunk<T, stats_dp(DP), true>(a.p.v, a.v_stats, w.b, w.h, w.t, sm.v);
    return;
  }
  i -= a.v_chunks.count();
  const Place w = place(a.q_tiles, i);
  quant_qk_tiles<T, true, QROWS, DP>(a.p.q, a.p.granularity, nullptr, a.p.q_int8, a.p.q_scale, a.q_pad, w.b, w.h, w.t,
                                     1, sm.q);
}
// CTAs an SM the two kernels are held to (registers a thread at most 65536 / (256 x this)): what each
// tile size had when every granularity was a kernel of its own, so that the granularity read at run
// time costs no occupancy, less one where that bound made ptxas spill on some arch (head dims 192 and
// 256; per-block Q at 128; K and V at 192).
// Head dim 256 on sm_90 keeps 4 CTAs an SM in both launches: ptxas spills up to 20 bytes a thread
// there (36-48 before the row-reduced maxima), and the call was 4 % faster than at 3 CTAs without a
// spill (bench/quant_ops.py on the H200, B4 H32 16k: 2535 -> 2429 us).  The other archs keep the
// bound that does not spill.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
inline constexpr int kHd256Ctas = 4;
#else
inline constexpr int kHd256Ctas = 3;
#endif
constexpr int stats_q_min_ctas(int qrows, int dp) {
  return qrows == 64 ? (dp <= 128 ? 4 : dp == 256 ? kHd256Ctas : 3) : dp <= 64 ? 4 : dp == 128 ? 3 : 1;
}
constexpr int quant_kv_min_ctas(int dp) { return dp == 64 ? 6 : dp == 128 ? 5 : dp == 192 ? 2 : kHd256Ctas; }

template <typename T, int QROWS, int DP>
__global__ void __launch_bounds__(cfg::kQuantThreads, stats_q_min_ctas(QROWS, DP))
    qkv_stats_q_kernel(const __grid_constant__ QkvArgs a) {
  using S = StatsQSmem<T, QROWS, DP>;
  if constexpr (kDynSmem<S>) {
    qkv_stats_q<T, QROWS, DP>(a, dyn_smem<S>());
  } else {
    __shared__ S sm;
    qkv_stats_q<T, QROWS, DP>(a, sm);
  }
}

template <typename T, int DP>
__global__ void __launch_bounds__(cfg::kQuantThreads, quant_kv_min_ctas(DP))
    qkv_quant_kv_kernel(const __grid_constant__ QkvArgs a) {
  constexpr int NT = kv_tiles_a_cta<DP>();
  __shared__ KVSmem<T, DP, NT> sm;
  ptx::griddep_wait();                       // launch 1's statistics are complete
  ptx::griddep_launch_dependents();          // the attention kernel may take the SMs this launch's tail leaves
  const int tiles = a.k_pad / cfg::kBlockK;  // key tiles a (batch, head)
  // The CTA's tiles: the last CTA of a head takes one where the count is odd
  // (with one a CTA, the constant 1, and the code is that of one tile).
  auto span = [&](const Place& w) { return NT == 1 ? 1 : min(NT, tiles - w.t * NT); };
  // The list [K tiles, V tiles] from its end: V's last head first.
  int i = (int)gridDim.x - 1 - (int)blockIdx.x;
  if (i >= a.k_tiles.count()) {
    const Place w = place(a.v_tiles, i - a.k_tiles.count());
    quant_v_tiles<T, DP, NT>(a.v, a.k_pad, w.b, w.h, w.t * NT, span(w), sm.v);
    return;
  }
  const Place w = place(a.k_tiles, i);
  quant_qk_tiles<T, false, cfg::kBlockK, DP, NT>(a.p.k, a.p.granularity, a.p.smooth_k ? a.k_stats.sum : nullptr,
                                                 a.p.k_int8, a.p.k_scale, a.k_pad, w.b, w.h, w.t * NT, span(w), sm.k);
}

// Launch 1 of a call (qkv_stats_q_kernel), n1 CTAs.
template <typename T, int QROWS, int D>
static sa_status launch_stats_q(const QkvArgs& a, unsigned n1, cudaStream_t stream) {
  size_t smem = 0;
  sa_status st = dyn_smem_bytes<StatsQSmem<T, QROWS, D>, qkv_stats_q_kernel<T, QROWS, D>>(&smem);
  if (st != SA_OK) return st;
  qkv_stats_q_kernel<T, QROWS, D><<<n1, cfg::kQuantThreads, smem, stream>>>(a);
  SA_LAUNCH_CHECK("qkv_stats_q");
  return SA_OK;
}

// The part of a call that holds K's and V's shape: k, else v (V alone).
static const sa_view& kv_view(const sa_quant_qkv_params& p) { return p.k.data != nullptr ? p.k : p.v; }

// The scratch: K sums (when smoothing K), V sums, maxima, minima (when V), all
// zeroed by one memset.
static int64_t qkv_stats_words(const sa_quant_qkv_params& p) {
  const sa_view& kv = kv_view(p);
  const int64_t plane = (int64_t)kv.batch * kv.heads * kv.dim;
  return (p.k.data != nullptr && p.smooth_k ? plane : 0) + (p.v.data != nullptr ? 3 * plane : 0);
}

static sa_status check_qkv(const sa_quant_qkv_params* p) {
  SA_CHECK_ARG(p != nullptr, "sa_quant_qkv: null params");
  const bool has_q = p->q.data != nullptr, has_k = p->k.data != nullptr, has_v = p->v.data != nullptr;
  SA_CHECK_ARG(has_q || has_k || has_v, "sa_quant_qkv: nothing to quantize (q, k and v all have null data)");
  SA_CHECK_ARG(
      p->granularity == SA_GRAN_PER_BLOCK || p->granularity == SA_GRAN_PER_WARP || p->granularity == SA_GRAN_PER_THREAD,
      "sa_quant_qkv: unknown granularity %d", (int)p->granularity);
  sa_status st = SA_OK;
  if (has_q) st = check_view(p->q, "q");
  if (st == SA_OK && has_k) st = check_view(p->k, "k");
  if (st == SA_OK && has_v) st = check_view(p->v, "v");
  if (st != SA_OK) return st;
  SA_CHECK_ARG(!has_q || (p->q_int8 && p->q_scale), "sa_quant_qkv: null output pointer (q_int8 or q_scale)");
  SA_CHECK_ARG(!has_k || (p->k_int8 && p->k_scale), "sa_quant_qkv: null output pointer (k_int8 or k_scale)");
  SA_CHECK_ARG(!has_v || (p->v_fp8 && p->v_scale && (p->v_mean || !p->smooth_v)),
               "sa_quant_qkv: null output pointer (v_fp8, v_scale, or v_mean with smooth_v)");
  const sa_view& kv = kv_view(*p);
  if (has_q && (has_k || has_v)) {
    const char* kv_name = has_k ? "k" : "v";
    SA_CHECK_ARG(p->q.batch == kv.batch && p->q.heads % kv.heads == 0 && p->q.dim == kv.dim,
                 "sa_quant_qkv: q [%d,%d,*,%d] and %s [%d,%d,*,%d] do not match (batch, heads multiple, head dim)",
                 p->q.batch, p->q.heads, p->q.dim, kv_name, kv.batch, kv.heads, kv.dim);
    SA_CHECK_ARG(p->q.dtype == kv.dtype, "sa_quant_qkv: q, k, v must share a dtype");
  }
  if (has_k && has_v) {
    SA_CHECK_ARG(p->v.dtype == p->k.dtype, "sa_quant_qkv: q, k, v must share a dtype");
    SA_CHECK_ARG(p->v.batch == p->k.batch && p->v.heads == p->k.heads && p->v.seq == p->k.seq && p->v.dim == p->k.dim,
                 "sa_quant_qkv: v [%d,%d,%d,%d] must have k's shape [%d,%d,%d,%d]", p->v.batch, p->v.heads, p->v.seq,
                 p->v.dim, p->k.batch, p->k.heads, p->k.seq, p->k.dim);
  }
  SA_CHECK_ARG(p->v_scale_max >= 0.f && p->v_scale_max <= SA_V_MAX,
               "sa_quant_qkv: v_scale_max must be in (0, %g] (0: %g), got %g", (double)SA_V_MAX, (double)SA_V_MAX,
               (double)p->v_scale_max);
  SA_CHECK_ARG(qkv_stats_words(*p) == 0 || (p->stats != nullptr && reinterpret_cast<uintptr_t>(p->stats) % 4 == 0),
               "sa_quant_qkv: stats must point to sa_quant_qkv_stats_bytes() bytes, 4-byte aligned");
  return SA_OK;
}

}  // namespace sa

extern "C" int64_t sa_quant_qkv_stats_bytes(const sa_quant_qkv_params* p) {
  if (p == nullptr) return -1;
  return sa::qkv_stats_words(*p) * 4;
}

extern "C" sa_status sa_quant_qkv(const sa_quant_qkv_params* p, cudaStream_t stream) {
  using namespace sa;
  sa_status st = check_qkv(p);
  if (st != SA_OK) return st;
  const bool has_q = p->q.data != nullptr, has_k = p->k.data != nullptr, has_v = p->v.data != nullptr;
  const sa_view& kv = kv_view(*p);
  const sa_view& any = has_q ? p->q : kv;  // dtype and head dim
  QkvArgs a{};
  a.p = *p;
  const bool smooth_k = has_k && p->smooth_k;
  a.p.smooth_k = smooth_k ? 1 : 0;
  const int dp = sa_padded_head_dim(any.dim);
  a.q_pad = has_q ? (int)sa_round_up(p->q.seq, cfg::kBlockQ) : 0;
  a.k_pad = (has_k || has_v) ? (int)sa_round_up(kv.seq, cfg::kBlockK) : 0;
  const int64_t plane = (int64_t)kv.batch * kv.heads * kv.dim;
  float* stats = static_cast<float*>(p->stats);
  float* v_stats = stats + (smooth_k ? plane : 0);
  a.k_stats = StatsOut{smooth_k ? stats : nullptr, nullptr, nullptr};
  a.v_stats = StatsOut{v_stats, v_stats + plane, v_stats + 2 * plane};
  a.v = VArgs{p->v,     v_stats,    v_stats + plane, v_stats + 2 * plane, p->smooth_v,
              p->v_fp8, p->v_scale, p->v_mean,       p->v_scale_max};
  const int chunks = (kv.seq + cfg::kStatRows - 1) / cfg::kStatRows;
  a.k_chunks = Segment{smooth_k ? chunks : 0, kv.heads, kv.batch};
  a.v_chunks = Segment{has_v ? chunks : 0, kv.heads, kv.batch};
  const int64_t words = qkv_stats_words(*p);
  if (words > 0) SA_CUDA_CHECK(cudaMemsetAsync(p->stats, 0, (size_t)words * 4, stream));
  return dispatch_dtype(any.dtype, [&](auto dt) {
    using T = typename DType<decltype(dt)::value>::T;
    // Q's tile size is the one granularity choice a kernel is compiled for: 128 rows or 64.  Without
    // Q, the 64-row instance: its Q tile is the smaller, so its shared memory leaves the most
    // statistics CTAs an SM.
    const bool q128 = has_q && q_rows(p->granularity) == cfg::kBlockQ;
    a.q_tiles = Segment{has_q ? a.q_pad / q_rows(p->granularity) : 0, p->q.heads, p->q.batch};
    return dispatch_head_dim(dp, [&](auto d) {
      constexpr int D = decltype(d)::value;
      constexpr int NT = kv_tiles_a_cta<D>();
      const int ctas = (a.k_pad / cfg::kBlockK + NT - 1) / NT;  // the K (or V) CTAs of a (batch, head)
      a.k_tiles = Segment{has_k ? ctas : 0, kv.heads, kv.batch};
      a.v_tiles = Segment{has_v ? ctas : 0, kv.heads, kv.batch};
      const int64_t n1 = (int64_t)a.q_tiles.count() + a.k_chunks.count() + a.v_chunks.count();
      const int64_t n2 = (int64_t)a.k_tiles.count() + a.v_tiles.count();
      SA_CHECK_ARG(n1 < INT32_MAX && n2 < INT32_MAX, "sa_quant_qkv: too many tiles for one launch");
      if (n1 > 0) {
        sa_status st = q128 ? launch_stats_q<T, cfg::kBlockQ, D>(a, (unsigned)n1, stream)
                            : launch_stats_q<T, 64, D>(a, (unsigned)n1, stream);
        if (st != SA_OK) return st;
      }
      if (n2 == 0) return SA_OK;
      return launch_after_previous("qkv_quant_kv", qkv_quant_kv_kernel<T, D>, dim3((unsigned)n2),
                                   dim3(cfg::kQuantThreads), 0, stream, a);
    });
  });
}

extern "C" int sa_v_key_perm(int p) { return sa::v_key_perm(p & 15); }
