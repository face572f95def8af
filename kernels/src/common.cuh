// Internal helpers shared by the kernel families: error reporting and the
// (head dim, causal, granularity, dtype) dispatch.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include "config.cuh"
#include "sageattn/sageattn.h"

namespace sa {

// Defined in abi.cu (always built): stores a thread-local message.
sa_status set_error(sa_status s, const char* fmt, ...);

#define SA_CHECK_ARG(cond, ...)                                                \
  do {                                                                         \
    if (!(cond)) return ::sa::set_error(SA_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)

#define SA_CUDA_CHECK(expr)                                                                                   \
  do {                                                                                                        \
    cudaError_t err_ = (expr);                                                                                \
    if (err_ != cudaSuccess)                                                                                  \
      return ::sa::set_error(SA_ERR_CUDA, "%s failed: %s (%s:%d)", #expr, cudaGetErrorString(err_), __FILE__, \
                             __LINE__);                                                                       \
  } while (0)

// Check the launch just made.
#define SA_LAUNCH_CHECK(what)                                                                         \
  do {                                                                                                \
    cudaError_t err_ = cudaGetLastError();                                                            \
    if (err_ != cudaSuccess)                                                                          \
      return ::sa::set_error(SA_ERR_CUDA, "launch of %s failed: %s", what, cudaGetErrorString(err_)); \
  } while (0)

inline sa_status check_view(const sa_view& v, const char* name) {
  SA_CHECK_ARG(v.data != nullptr, "%s: null data pointer", name);
  SA_CHECK_ARG(v.dtype == SA_DTYPE_F16 || v.dtype == SA_DTYPE_BF16, "%s: dtype must be f16 or bf16", name);
  SA_CHECK_ARG(v.batch > 0 && v.heads > 0 && v.seq > 0 && v.dim > 0, "%s: shape must be positive, got [%d,%d,%d,%d]",
               name, v.batch, v.heads, v.seq, v.dim);
  SA_CHECK_ARG(v.dim % 8 == 0 && v.dim <= SA_MAX_HEAD_DIM, "%s: head dim must be a multiple of 8 and <= %d, got %d",
               name, SA_MAX_HEAD_DIM, v.dim);
  SA_CHECK_ARG((reinterpret_cast<uintptr_t>(v.data) & 15) == 0, "%s: data must be 16-byte aligned", name);
  SA_CHECK_ARG(v.stride_batch % 8 == 0 && v.stride_head % 8 == 0 && v.stride_seq % 8 == 0,
               "%s: strides must be multiples of 8 elements (16 bytes)", name);
  return SA_OK;
}

// ---- variable-length batches: where sequence b of a view starts, and its length.
// A NULL seq_start / seq_len is the dense batch (sageattn.h, sa_view).
template <typename T>
__device__ __forceinline__ const T* view_rows(const sa_view& v, int b, int h) {
  const int64_t row0 = v.seq_start != nullptr ? (int64_t)v.seq_start[b] * v.stride_seq : (int64_t)b * v.stride_batch;
  return reinterpret_cast<const T*>(v.data) + row0 + (int64_t)h * v.stride_head;
}
// Per-batch length from an optional device array, clamped to [0, n] so a bad
// length never reaches past the padded quantized tensors.
__device__ __forceinline__ int batch_len(const int32_t* lens, int b, int n) {
  return lens != nullptr ? min(max(lens[b], 0), n) : n;
}
__device__ __forceinline__ int view_len(const sa_view& v, int b) { return batch_len(v.seq_len, b, v.seq); }

// Two floats to two adjacent output elements (the attention epilogues).
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

// Eight 16-bit elements (one 16-byte chunk, as loaded) as floats: the
// quantization pre-pass (load8) and the sm90 kernel's own Q quantization.
__device__ __forceinline__ void unpack8(uint4 u, __half, float (&x)[8]) {
  const __half2* h = reinterpret_cast<const __half2*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = __half22float2(h[i]);
    x[2 * i] = f.x;
    x[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ void unpack8(uint4 u, __nv_bfloat16, float (&x)[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = __bfloat1622float2(h[i]);
    x[2 * i] = f.x;
    x[2 * i + 1] = f.y;
  }
}
__device__ __forceinline__ void load8(const __half* p, float (&x)[8]) {
  unpack8(*reinterpret_cast<const uint4*>(p), __half{}, x);
}
__device__ __forceinline__ void load8(const __nv_bfloat16* p, float (&x)[8]) {
  unpack8(*reinterpret_cast<const uint4*>(p), __nv_bfloat16{}, x);
}

// ---- the ONE dispatch point: runtime (head dim, causal, granularity, dtype)
// ---- values to template arguments.
template <int V>
struct IntC {
  static constexpr int value = V;
};

template <typename F>
inline sa_status dispatch_head_dim(int dp, F&& f) {
  if (dp == 64) return f(IntC<64>{});
  if (dp == 128) return f(IntC<128>{});
  if (dp == 192) return f(IntC<192>{});
  if (dp == 256) return f(IntC<256>{});
  return set_error(SA_ERR_UNSUPPORTED, "padded head dim %d not supported (64, 128, 192 or 256)", dp);
}
template <typename F>
inline sa_status dispatch_bool(bool b, F&& f) {
  return b ? f(IntC<1>{}) : f(IntC<0>{});
}
template <typename F>
inline sa_status dispatch_gran(int g, F&& f) {
  switch (g) {
    case SA_GRAN_PER_BLOCK:
      return f(IntC<SA_GRAN_PER_BLOCK>{});
    case SA_GRAN_PER_WARP:
      return f(IntC<SA_GRAN_PER_WARP>{});
    case SA_GRAN_PER_THREAD:
      return f(IntC<SA_GRAN_PER_THREAD>{});
    default:
      return set_error(SA_ERR_INVALID_ARGUMENT, "unknown granularity %d", g);
  }
}
// dtype: IntC<0> = __half, IntC<1> = __nv_bfloat16 (see DTypeOf)
template <typename F>
inline sa_status dispatch_dtype(sa_dtype d, F&& f) {
  if (d == SA_DTYPE_F16) return f(IntC<SA_DTYPE_F16>{});
  if (d == SA_DTYPE_BF16) return f(IntC<SA_DTYPE_BF16>{});
  return set_error(SA_ERR_INVALID_ARGUMENT, "unknown dtype %d", static_cast<int>(d));
}

// Compute capability of the current device, cached per device (0 on error).
inline int current_cc() {
  static int cached[64] = {0};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0) return 0;
  if (dev < 64 && cached[dev] != 0) return cached[dev];
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
    return 0;
  const int cc = major * 10 + minor;
  if (dev < 64) cached[dev] = cc;
  return cc;
}

// The routing table's row (sa_route, route_table.h) for an attention call of
// P.V path `pv` on the current device.  The accumulator asked for is
// p->pv_accum_f16 on the FP8 P.V (any other value than 0 as 1: the kernels'
// own checks reject it), none on the FP16 one (ditto).
inline sa_status route_call(const sa_attn_params* p, sa_pv pv, sa_route_row* row) {
  const int cc = current_cc();
  if (cc == 0) {
    (void)cudaGetLastError();
    return set_error(SA_ERR_CUDA, "cannot read the current CUDA device's compute capability");
  }
  const sa_route_query q{cc, p->head_dim, pv,
                         pv == SA_PV_FP8 ? (p->pv_accum_f16 != 0 ? 1 : 0) : static_cast<int>(SA_ROUTE_ANY)};
  return sa_route(&q, row);
}

// SAGEATTN_SMEM_PER_SM_KB=N (a measurement knob, read once): the kernels that
// honour it (the mma.sync families) ask for a shared-memory carveout of N KiB
// an SM, so that a GPU with more runs them at the occupancy an SM with N KiB
// gives: an H100 (228 KiB) as the 100 KiB of an sm_86 / 89 / 120 SM (ncu's
// "Shared Memory Configuration Size" shows what the driver chose).  The
// percentage of device `dev`'s maximum; 0 when unset.  opt_in_smem asks, once
// per device and kernel.
inline int smem_carveout_percent(int dev) {
  static const int kb = [] {
    const char* e = std::getenv("SAGEATTN_SMEM_PER_SM_KB");
    return e != nullptr ? std::atoi(e) : 0;
  }();
  if (kb <= 0) return 0;
  int max_bytes = 0;
  if (cudaDeviceGetAttribute(&max_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
      max_bytes <= 0)
    return 0;
  // Rounded down: the driver takes the next supported size at or above the
  // percentage (H100: ... 64, 100, 132 ... KiB), and 44 % of 228 KiB would
  // already pass 100 and land on 132.
  return std::max(1, std::min(100, kb * 1024 * 100 / max_bytes));
}

// A kernel's opt-in to more than 48 KiB of dynamic shared memory, once per
// device for each kernel (the attribute call costs microseconds per call).
// carveout_knob: also the carveout SAGEATTN_SMEM_PER_SM_KB asks for, if set
// (smem_carveout_percent), worked out in that same once-per-device step.
template <auto Kernel>
inline sa_status opt_in_smem(int bytes, bool carveout_knob = false) {
  static bool done[64] = {};
  int dev = 0;
  SA_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64 || !done[dev]) {
    SA_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    const int carveout_percent = carveout_knob ? smem_carveout_percent(dev) : 0;
    if (carveout_percent > 0)
      SA_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout_percent));
    if (dev >= 0 && dev < 64) done[dev] = true;
  }
  return SA_OK;
}

// Launch `kernel` so that, on compute capability 9.0+, its CTAs may start
// while the previous kernel in the stream finishes (programmatic dependent
// launch): the kernel itself must call ptx::griddep_wait() before it reads what
// that kernel wrote.  Older devices get a plain stream-ordered launch.  A
// failed launch is reported as SA_LAUNCH_CHECK reports one, naming `what`.
template <typename... Params, typename... Args>
inline sa_status launch_after_previous(const char* what, void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                                       cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  if (current_cc() >= 90) {
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // consumed here, as SA_LAUNCH_CHECK consumes it
    return set_error(SA_ERR_CUDA, "launch of %s failed: %s", what, cudaGetErrorString(err));
  }
  return SA_OK;
}

}  // namespace sa
