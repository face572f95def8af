// Family "sm90" (sm_90a only): the SageAttention forward on Hopper, for both
// P.V paths, warp-specialized (same algorithm, quantized inputs and outputs as
// the mma.sync families, so it is a drop-in for sa_attn_qk_int8_pv_fp8 / _fp16
// on compute capability 9.0):
//   kernels/src/sm90/tile.cuh      shapes, shared memory, parameters, schedule
//   kernels/src/sm90/pipeline.cuh  the TMA producer and the mbarrier ring
//   kernels/src/sm90/mma.cuh       Q.K^T (wgmma s8) and P.V (wgmma e4m3 / f16)
//   kernels/src/sm90/softmax.cuh   the online softmax and the P fragments
//   kernels/src/sm90/consumer.cuh  the consumer warpgroups' schedule
//   kernels/src/sm90/epilogue.cuh  O and LSE to global memory
// This file: the kernel (role split, register reallocation), the tensor maps
// and the launch.  The fp16 path reads the caller's V directly (MN-major
// operand through TMA): no transposed copy, no workspace.
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include "sm90/consumer.cuh"

namespace sa {
namespace sm90 {

template <int DP, bool CAUSAL, bool PV_FP8, typename OutT, bool QIN>
__global__ void __launch_bounds__(kThreads, 1) attn_sm90_kernel(const __grid_constant__ Params prm) {
#if defined(__CUDA_ARCH__) && !defined(SA_HAS_WGMMA)
  __trap();  // the family is built for sm_90a only
#else
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t raw = ptx::smem_u32(smem_raw);
  const uint32_t pad = (1024u - (raw & 1023u)) & 1023u;  // swizzle patterns repeat every 1 KiB
  const Ring<DP, PV_FP8, QIN> ring{raw + pad};
  if (threadIdx.x == 0) ring.init();
  __syncthreads();

  const int wg = (int)threadIdx.x / 128;
  if (wg == 0) {
    ptx::setmaxnreg_dec<cfg::sm90::producer_regs(DP)>();
    if (threadIdx.x / 32 == 0 && ptx::elect_one()) produce<DP, CAUSAL, PV_FP8, QIN>(prm, ring);
  } else {
    ptx::setmaxnreg_inc<cfg::sm90::consumer_regs(DP)>();
    const int lane = (int)threadIdx.x & 31;
    const Consumer<DP, CAUSAL, PV_FP8, OutT, QIN> c{
        prm, ring, smem_raw + pad, wg - 1, ((int)threadIdx.x / 32) & 3, lane >> 2, lane & 3};
    c.run();
  }
#endif
}

// ---- host side: tensor maps (cuTensorMapEncodeTiled from the driver, found
// through the runtime so that nothing links libcuda), SM count, launch.
using EncodeTiled = PFN_cuTensorMapEncodeTiled_v12000;

static sa_status encode_fn(EncodeTiled* out) {
  static std::once_flag once;
  static EncodeTiled fn = nullptr;
  static cudaError_t err = cudaSuccess;
  std::call_once(once, [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q);
#else
    err = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &q);
#endif
    if (err == cudaSuccess && q == cudaDriverEntryPointSuccess) fn = reinterpret_cast<EncodeTiled>(f);
  });
  if (fn == nullptr)
    return set_error(SA_ERR_CUDA, "sm90: the driver has no cuTensorMapEncodeTiled (%s)",
                     err == cudaSuccess ? "symbol not found" : cudaGetErrorString(err));
  *out = fn;
  return SA_OK;
}

// A tiled tensor map of `rank` dimensions (innermost first; strides in bytes
// for dimensions 1..rank-1), the box in elements.
static sa_status make_map(CUtensorMap* m, CUtensorMapDataType type, int rank, const void* ptr, const uint64_t* dims,
                          const uint64_t* strides, const uint32_t* box, CUtensorMapSwizzle swizzle, const char* what) {
  EncodeTiled encode = nullptr;
  sa_status st = encode_fn(&encode);
  if (st != SA_OK) return st;
  cuuint64_t d[5], s[4];
  cuuint32_t b[5], e[5];
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    b[i] = box[i];
    e[i] = 1;
    if (i + 1 < rank) s[i] = strides[i];
  }
  const CUresult r =
      encode(m, type, (cuuint32_t)rank, const_cast<void*>(ptr), d, s, b, e, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return set_error(SA_ERR_CUDA, "sm90: cuTensorMapEncodeTiled(%s) failed with error %d", what, (int)r);
  return SA_OK;
}

static CUtensorMapSwizzle swizzle_for(int row_bytes) {
  return row_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
}

// Q quantized in the kernel (sa_attn_sm90_qk_int8_pv_fp8_takes_q): the
// caller's Q through a 4-D tensor map, which needs a dense view (no per-batch
// starts or lengths: the map's zeros end at q_len) of the call's shape, its
// dtype the output's, and the fp8 P.V's tile up to 128.  The 16-byte aligned
// data and strides TMA needs are every view's (check_view, in the entry point).
// SAGEATTN_SM90_QUANT_Q=0 (read once) keeps Q on sa_quant_qkv.
static bool takes_q(const sa_attn_params* p) {
  static const bool off = [] {
    const char* e = std::getenv("SAGEATTN_SM90_QUANT_Q");
    return e != nullptr && std::strcmp(e, "0") == 0;
  }();
  const sa_view& q = p->q;
  return !off && q.data != nullptr && sa_padded_head_dim(p->head_dim) <= 128 && q.seq_start == nullptr &&
         q.seq_len == nullptr && q.dtype == p->out_dtype && q.batch == p->batch && q.heads == p->q_heads &&
         q.seq == p->q_len && q.dim == p->head_dim &&
         (p->q_granularity == SA_GRAN_PER_BLOCK || p->q_granularity == SA_GRAN_PER_WARP ||
          p->q_granularity == SA_GRAN_PER_THREAD);
}

template <int DP, bool PV_FP8, bool QIN>
static sa_status make_params(const AttnArgs& a, Params* prm) {
  using L = Tile<DP, PV_FP8, QIN>;
  const sa_attn_params& p = a.p;
  const uint64_t bhq = (uint64_t)p.batch * p.q_heads, bhk = (uint64_t)p.batch * p.kv_heads;
  sa_status st;
  if constexpr (QIN) {  // [B][Hq][Nq][D], box [1][1][128 rows][64 elements]
    const sa_view& q = p.q;
    const uint64_t dims[4] = {(uint64_t)q.dim, (uint64_t)q.seq, (uint64_t)q.heads, (uint64_t)q.batch};
    const uint64_t strides[3] = {(uint64_t)q.stride_seq * 2, (uint64_t)q.stride_head * 2, (uint64_t)q.stride_batch * 2};
    const uint32_t box[4] = {64, kRows, 1, 1};
    st = make_map(&prm->tm_qf,
                  q.dtype == SA_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
                  q.data, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B, "q");
    if (st != SA_OK) return st;
  } else {
    const uint64_t dims[3] = {DP, (uint64_t)a.q_pad, bhq}, strides[2] = {DP, (uint64_t)a.q_pad * DP};
    const uint32_t box[3] = {L::kPanel, kRows, 1};
    st = make_map(&prm->tm_q, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, p.q_int8, dims, strides, box, swizzle_for(L::kPanel),
                  "q");
    if (st != SA_OK) return st;
  }
  {
    const uint64_t dims[3] = {DP, (uint64_t)a.k_pad, bhk}, strides[2] = {DP, (uint64_t)a.k_pad * DP};
    const uint32_t box[3] = {L::kPanel, L::kBN, 1};
    st = make_map(&prm->tm_k, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, p.k_int8, dims, strides, box, swizzle_for(L::kPanel),
                  "k");
    if (st != SA_OK) return st;
  }
  {
    const uint64_t dims[3] = {4, (uint64_t)a.k_pad / 64, bhk}, strides[2] = {16, (uint64_t)a.k_pad / 64 * 16};
    const uint32_t box[3] = {4, L::kSub, 1};
    st = make_map(&prm->tm_ks, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, p.k_scale, dims, strides, box,
                  CU_TENSOR_MAP_SWIZZLE_NONE, "k_scale");
    if (st != SA_OK) return st;
  }
  if constexpr (PV_FP8) {  // V^T e4m3 [B*Hk][DP][k_pad]
    const uint64_t dims[3] = {(uint64_t)a.k_pad, DP, bhk}, strides[2] = {(uint64_t)a.k_pad, (uint64_t)a.k_pad * DP};
    const uint32_t box[3] = {L::kBN, DP, 1};
    st = make_map(&prm->tm_v, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, p.v_fp8, dims, strides, box, swizzle_for(L::kBN), "v");
  } else {  // the caller's V [B][Hk][N][D] f16, any strides (16-byte multiples), or its dense copy
    const sa_view& v = p.v;
    const uint64_t dims[4] = {(uint64_t)v.dim, (uint64_t)v.seq, (uint64_t)v.heads, (uint64_t)v.batch};
    const uint64_t strides[3] = {(uint64_t)v.stride_seq * 2, (uint64_t)v.stride_head * 2, (uint64_t)v.stride_batch * 2};
    const uint32_t box[4] = {64, L::kBN, 1, 1};
    st = make_map(&prm->tm_v, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, v.data, dims, strides, box,
                  CU_TENSOR_MAP_SWIZZLE_128B, "v");
  }
  if (st != SA_OK) return st;
  prm->a = a;
  prm->n_qt = a.q_pad / kRows;
  prm->total = prm->n_qt * p.q_heads * p.batch;
  prm->pairs = p.causal ? 1 : 0;
  prm->out_vec = reinterpret_cast<uintptr_t>(p.out) % 16 == 0 && p.out_stride_seq % 8 == 0 &&
                 p.out_stride_head % 8 == 0 && p.out_stride_batch % 8 == 0;
  return SA_OK;
}

// The fp16 path reads V through a 4-D tensor map [B][Hk][N][D]; ragged
// sequences (a view with seq_start / seq_len) have no such shape, so they are
// first gathered into a dense copy [B][Hk][k_pad][D], zero past each length.
static bool v_needs_gather(const sa_attn_params* p) { return p->v.seq_start != nullptr || p->v.seq_len != nullptr; }
static int64_t v_gather_bytes(const sa_attn_params* p) {
  return v_needs_gather(p) ? (int64_t)p->batch * p->kv_heads * sa_round_up(p->kv_len, cfg::kBlockK) * p->v.dim * 2 : 0;
}

__global__ void __launch_bounds__(256) gather_v_kernel(sa_view v, __half* __restrict__ dst, int k_pad) {
  const int b = blockIdx.z, h = blockIdx.y, k0 = blockIdx.x * 64;
  const __half* src = view_rows<__half>(v, b, h);
  const int len = view_len(v, b), cpr = v.dim / 8;  // 16-byte chunks per row
  __half* out = dst + (((size_t)b * v.heads + h) * k_pad + k0) * v.dim;
  for (int i = threadIdx.x; i < 64 * cpr; i += 256) {
    const int r = i / cpr, c = (i % cpr) * 8;
    uint4 u = make_uint4(0, 0, 0, 0);
    if (k0 + r < len) u = *reinterpret_cast<const uint4*>(src + (size_t)(k0 + r) * v.stride_seq + c);
    *reinterpret_cast<uint4*>(out + (size_t)r * v.dim + c) = u;
  }
}

// Stream-ordered scratch for the gathered V when the caller gives no
// workspace: a memory pool of our own per device (never the device's default
// pool, whose settings belong to the application), which keeps freed blocks.
static cudaError_t scratch_pool(cudaMemPool_t* out) {
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

static sa_status sm_count(int* out) {
  static int cached[64] = {0};
  int dev = 0;
  SA_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev >= 0 && dev < 64 && cached[dev] != 0) {
    *out = cached[dev];
    return SA_OK;
  }
  int n = 0;
  SA_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  if (dev >= 0 && dev < 64) cached[dev] = n;
  *out = n;
  return SA_OK;
}

template <int DP, bool CAUSAL, bool PV_FP8, typename OutT, bool QIN>
sa_status launch(const AttnArgs& a, cudaStream_t stream) {
  using L = Tile<DP, PV_FP8, QIN>;
  Params prm;
  sa_status st = make_params<DP, PV_FP8, QIN>(a, &prm);
  if (st != SA_OK) return st;
  int sms = 0;
  st = sm_count(&sms);
  if (st != SA_OK) return st;
  constexpr auto kern = attn_sm90_kernel<DP, CAUSAL, PV_FP8, OutT, QIN>;
  st = opt_in_smem<kern>(L::kTotal);
  if (st != SA_OK) return st;
  const int grid = prm.total < sms ? prm.total : sms;
  // Its set-up (barriers, register split) overlaps the quantization's tail; the
  // roles wait for the quantized inputs before their first read (griddep_wait).
  return launch_after_previous(PV_FP8 ? "attn_sm90_qk_int8_pv_fp8" : "attn_sm90_qk_int8_pv_fp16", kern, dim3(grid),
                               dim3(kThreads), L::kTotal, stream, prm);
}

template <bool PV_FP8>
sa_status launch_dispatch(const AttnArgs& a, int dp, cudaStream_t stream) {
  return dispatch_head_dim(dp, [&](auto d) {
    constexpr int DP = decltype(d)::value;
    if constexpr (PV_FP8 && DP > cfg::sm90::kFp8MaxHeadDim) {
      return set_error(SA_ERR_UNSUPPORTED,
                       "sa_attn_sm90_qk_int8_pv_fp8: head_dim %d: the sm90 fp8 P.V takes head dims up to %d "
                       "(sa_attn_qk_int8_pv_fp8 runs larger ones on the mma.sync kernel)",
                       a.p.head_dim, cfg::sm90::kFp8MaxHeadDim);
    } else {
      return dispatch_bool(a.p.causal != 0, [&](auto c) {
        return dispatch_dtype(a.p.out_dtype, [&](auto od) {
          using OutT = std::conditional_t<decltype(od)::value == SA_DTYPE_F16, __half, __nv_bfloat16>;
          constexpr bool kCausal = decltype(c)::value != 0;
          if constexpr (PV_FP8 && DP <= 128) {
            if (a.p.q.data != nullptr) return launch<DP, kCausal, PV_FP8, OutT, true>(a, stream);
          }
          return launch<DP, kCausal, PV_FP8, OutT, false>(a, stream);
        });
      });
    }
  });
}

}  // namespace sm90
}  // namespace sa

extern "C" int sa_attn_sm90_qk_int8_pv_fp8_takes_q(const sa_attn_params* p) {
  return p != nullptr && sa::sm90::takes_q(p) ? 1 : 0;
}

extern "C" sa_status sa_attn_sm90_qk_int8_pv_fp8(const sa_attn_params* p, cudaStream_t stream) {
  using namespace sa;
  sa_status st = check_attn_params(p, true, "sa_attn_sm90_qk_int8_pv_fp8");
  if (st != SA_OK) return st;
  if (p->q.data != nullptr) {
    st = check_view(p->q, "q");
    if (st != SA_OK) return st;
  }
  SA_CHECK_ARG(p->q.data == nullptr || sm90::takes_q(p),
               "sa_attn_sm90_qk_int8_pv_fp8: p->q given where the kernel does not quantize Q itself "
               "(sa_attn_qk_int8_pv_fp8_takes_q says 0: give q_int8 and q_scale)");
  return sm90::launch_dispatch<true>(make_attn_args(p), sa_padded_head_dim(p->head_dim), stream);
}

// The fp16 path reads V in place; ragged V is gathered into a dense copy first.
extern "C" int64_t sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes(const sa_attn_params* p) {
  if (sa::check_attn_params(p, false, "sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes") != SA_OK) return -1;
  return sa::sm90::v_gather_bytes(p);
}

extern "C" sa_status sa_attn_sm90_qk_int8_pv_fp16(const sa_attn_params* p, cudaStream_t stream) {
  using namespace sa;
  sa_status st = check_attn_params(p, false, "sa_attn_sm90_qk_int8_pv_fp16");
  if (st != SA_OK) return st;
  AttnArgs a = make_attn_args(p);
  const int dp = sa_padded_head_dim(p->head_dim);
  if (!sm90::v_needs_gather(p)) return sm90::launch_dispatch<false>(a, dp, stream);
  const int64_t bytes = sm90::v_gather_bytes(p);
  void* vd = p->workspace;
  cudaMemPool_t pool = nullptr;
  if (vd != nullptr) {  // the caller's (e.g. torch's allocator): its size and alignment are checked
    if (p->workspace_bytes < bytes)
      return set_error(SA_ERR_INVALID_ARGUMENT, "sa_attn_sm90_qk_int8_pv_fp16: workspace of %lld bytes, needs %lld",
                       (long long)p->workspace_bytes, (long long)bytes);
    if (reinterpret_cast<uintptr_t>(vd) % 16 != 0)
      return set_error(SA_ERR_INVALID_ARGUMENT, "sa_attn_sm90_qk_int8_pv_fp16: workspace is not 16-byte aligned");
  } else {
    SA_CUDA_CHECK(sm90::scratch_pool(&pool));
    SA_CUDA_CHECK(cudaMallocFromPoolAsync(&vd, (size_t)bytes, pool, stream));
  }
  dim3 grid(a.k_pad / 64, p->kv_heads, p->batch);
  sm90::gather_v_kernel<<<grid, 256, 0, stream>>>(p->v, static_cast<__half*>(vd), a.k_pad);
  cudaError_t le = cudaGetLastError();
  if (le == cudaSuccess) {
    // the dense copy as the kernel's V: [B][Hk][k_pad][D], no ragged sequences
    sa_view& v = a.p.v;
    v.data = vd;
    v.seq = a.k_pad;
    v.stride_seq = v.dim;
    v.stride_head = (int64_t)a.k_pad * v.dim;
    v.stride_batch = (int64_t)p->kv_heads * a.k_pad * v.dim;
    v.seq_start = nullptr;
    v.seq_len = nullptr;
    st = sm90::launch_dispatch<false>(a, dp, stream);
  }
  if (pool != nullptr) SA_CUDA_CHECK(cudaFreeAsync(vd, stream));  // stream-ordered: after the kernel
  if (le != cudaSuccess) return set_error(SA_ERR_CUDA, "launch of gather_v failed: %s", cudaGetErrorString(le));
  return st;
}
