// Family "pv_fp8" (sm89+: mma.m16n8k32 e4m3): INT8 QK^T, FP8 PV with two-level
// (per-tile MMA accumulator + fp32 buffer) accumulation.
#include <type_traits>
#include "attn_kernel.cuh"

extern "C" sa_status sa_attn_qk_int8_pv_fp8(const sa_attn_params* p, cudaStream_t stream) {
  return sa::launch_attn<true>(p, stream);
}
