// Family "pv_fp16" (sm80+): INT8 QK^T, FP16 PV with fp32 accumulation.  When
// the sm90 family (wgmma) is linked in, a 9.0 device is routed there.
#include <type_traits>
#include "sm80/attn.cuh"

// Defined by the sm90 family (kernels/src/attn_sm90.cu) when the build has it.
#pragma weak sa_attn_sm90_qk_int8_pv_fp16
#pragma weak sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes

extern "C" sa_status sa_attn_qk_int8_pv_fp16(const sa_attn_params* p, cudaStream_t stream) {
  if (&sa_attn_sm90_qk_int8_pv_fp16 != nullptr && sa::route_to_sm90()) return sa_attn_sm90_qk_int8_pv_fp16(p, stream);
  return sa::sm80::launch<false>(p, stream);
}

extern "C" int64_t sa_attn_qk_int8_pv_fp16_workspace_bytes(const sa_attn_params* p) {
  if (&sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes != nullptr && sa::route_to_sm90())
    return sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes(p);
  return 0;  // the mma.sync kernel reads V as given
}
