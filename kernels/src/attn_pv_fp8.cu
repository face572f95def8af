// Family "pv_fp8" (sm89+: mma.m16n8k32 e4m3): INT8 QK^T, FP8 PV with two-level
// (per-tile MMA accumulator + fp32 buffer) accumulation.  On sm_90 the e4m3
// mma.sync is emulated (2 f16 HMMA + conversions), so when the sm90 family
// (wgmma, native e4m3) is linked in, a 9.0 device is routed there.
#include <type_traits>
#include "sm80/attn.cuh"

// Defined by the sm90 family (kernels/src/attn_sm90.cu) when the build has it.
#pragma weak sa_attn_sm90_qk_int8_pv_fp8

extern "C" sa_status sa_attn_qk_int8_pv_fp8(const sa_attn_params* p, cudaStream_t stream) {
  // Head dims the sm90 fp8 P.V does not take stay here.
  if (&sa_attn_sm90_qk_int8_pv_fp8 != nullptr && sa::route_to_sm90() && p != nullptr &&
      p->head_dim <= sa::cfg::sm90::kFp8MaxHeadDim)
    return sa_attn_sm90_qk_int8_pv_fp8(p, stream);
  return sa::sm80::launch<true>(p, stream);
}
