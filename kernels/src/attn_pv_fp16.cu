// Family "pv_fp16" (sm80+): INT8 QK^T, FP16 PV with fp32 accumulation.  The
// routing table (route_table.h) sends a call to the sm90 family's kernel
// where it serves (9.0, when linked in).
#include <type_traits>
#include "sm80/attn.cuh"

// Defined by the sm90 family (kernels/src/attn_sm90.cu) when the build has it.
#pragma weak sa_attn_sm90_qk_int8_pv_fp16
#pragma weak sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes

extern "C" sa_status sa_attn_qk_int8_pv_fp16(const sa_attn_params* p, cudaStream_t stream) {
  SA_CHECK_ARG(p != nullptr, "sa_attn_qk_int8_pv_fp16: null params");
  sa_route_row r;
  const sa_status st = sa::route_call(p, SA_PV_FP16, &r);
  if (st != SA_OK) return st;
  if (r.kernel == SA_KERNEL_SM90_PV_FP16) return sa_attn_sm90_qk_int8_pv_fp16(p, stream);
  return sa::sm80::launch<false>(p, stream);
}

extern "C" int64_t sa_attn_qk_int8_pv_fp16_workspace_bytes(const sa_attn_params* p) {
  if (p == nullptr) {
    sa::set_error(SA_ERR_INVALID_ARGUMENT, "sa_attn_qk_int8_pv_fp16_workspace_bytes: null params");
    return -1;
  }
  sa_route_row r;
  if (sa::route_call(p, SA_PV_FP16, &r) != SA_OK) return -1;
  if (r.kernel == SA_KERNEL_SM90_PV_FP16) return sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes(p);
  return 0;  // the mma.sync kernel reads V as given
}
