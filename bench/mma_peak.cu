// The tensor-pipe ceilings the attention kernels run against: mma.sync
// throughput on this GPU for each MMA shape the mma.sync families issue
// (m16n8k32 s8 for Q.K^T; m16n8k16 f16 with fp32 accumulation and m16n8k32
// e4m3 with fp32 or fp16 accumulation for P.V).  Each warp keeps kChains
// independent accumulators in flight, so the figure is the pipe's, not one
// MMA's latency.  The A operand changes every round, as P and V do in the
// kernels: on sm_90 the e4m3 MMA is emulated (its operands are converted to
// f16 for HMMA), and constant operands would let the compiler hoist that
// conversion out of the loop; the e4m3 loops change B too (one LOP per MMA).  TOPS = 2*M*N*K per MMA.
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels/include -Ikernels/src bench/mma_peak.cu -o mma_peak && ./mma_peak
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include "sageattn/ptx.cuh"

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "%s: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

constexpr int kChains = 8;
constexpr int kIters = 4096;

enum Op { S8, F16F32, E4M3F32, E4M3F16 };

// kChains accumulators of N elements of T, each started apart so that the
// compiler merges none; A changes every round and, with VARY_B, each MMA gets
// its own B (as each n-tile of V does in the kernels).
template <typename T, int N, bool VARY_B, typename Mma>
__device__ __forceinline__ void chains(uint32_t seed, int* sink, Mma mma) {
  uint32_t a[4] = {seed, seed * 3u, seed * 5u, seed * 7u};
  uint32_t b0 = seed ^ threadIdx.x, b1 = b0 * 9u;
  T c[kChains][N] = {};
#pragma unroll
  for (int j = 0; j < kChains; ++j) c[j][0] = (T)j;
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) {
      if constexpr (VARY_B)
        mma(c[j], a, b0 ^ (j * 0x00010001u), b1 ^ j);
      else
        mma(c[j], a, b0, b1);
    }
    a[i & 3] += 0x01010101u;
    if constexpr (VARY_B) b0 += 0x01010101u;
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j)
#pragma unroll
    for (int e = 0; e < N; ++e) s += c[j][e];
  if (s == (T)12345) *sink = 1;  // keeps the results live
}

template <Op OP>
__global__ void __launch_bounds__(256) mma_loop(uint32_t seed, int* sink) {
  if constexpr (OP == S8) {
    chains<int32_t, 4, false>(
        seed, sink, [](auto& c, auto& a, uint32_t b0, uint32_t b1) { sa::ptx::mma_m16n8k32_s8(c, a, b0, b1); });
  } else if constexpr (OP == F16F32) {
    chains<float, 4, false>(
        seed, sink, [](auto& c, auto& a, uint32_t b0, uint32_t b1) { sa::ptx::mma_m16n8k16_f16(c, a, b0, b1); });
  } else {
#if defined(SA_HAS_E4M3_MMA)
    if constexpr (OP == E4M3F32)
      chains<float, 4, true>(
          seed, sink, [](auto& c, auto& a, uint32_t b0, uint32_t b1) { sa::ptx::mma_m16n8k32_e4m3(c, a, b0, b1); });
    else
      chains<uint32_t, 2, true>(seed, sink, [](auto& c, auto& a, uint32_t b0, uint32_t b1) {
        sa::ptx::mma_m16n8k32_e4m3_f16acc(c, a, b0, b1);
      });
#endif
  }
}

template <Op OP>
int run(const char* name, double mnk, int sms) {
  int* sink;
  CK(cudaMalloc(&sink, sizeof(int)));
  const int blocks = sms * 4, threads = 256;    // 32 warps per SM
  mma_loop<OP><<<blocks, threads>>>(1u, sink);  // warm up (clocks)
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    CK(cudaEventRecord(e0));
    mma_loop<OP><<<blocks, threads>>>(r + 2u, sink);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms < best) best = ms;
  }
  const double ops = 2.0 * mnk * kChains * kIters * (double)blocks * (threads / 32);
  printf("%-28s %8.1f TOPS  (%.3f ms)\n", name, ops / (best * 1e-3) / 1e12, best);
  CK(cudaFree(sink));
  return 0;
}

int main() {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 1;
  printf("%s, %d SMs, sm_%d%d: mma.sync throughput, %d warps/SM, %d chains per warp\n", p.name, p.multiProcessorCount,
         p.major, p.minor, 32, kChains);
  const int sms = p.multiProcessorCount;
  int rc = run<S8>("m16n8k32 s8 (int32 acc)", 16.0 * 8 * 32, sms);
  rc |= run<F16F32>("m16n8k16 f16 (fp32 acc)", 16.0 * 8 * 16, sms);
  rc |= run<E4M3F32>("m16n8k32 e4m3 (fp32 acc)", 16.0 * 8 * 32, sms);
  rc |= run<E4M3F16>("m16n8k32 e4m3 (fp16 acc)", 16.0 * 8 * 32, sms);
  return rc;
}
