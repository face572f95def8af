// Family "pv_fp8" (sm89+: mma.m16n8k32 e4m3): INT8 QK^T, FP8 PV with two-level
// (per-tile MMA accumulator + fp32 buffer) accumulation.  The routing table
// (route_table.h) sends a call to the sm90 family's kernel where it serves
// (9.0 up to its head dims, when linked in: on sm_90 the e4m3 mma.sync is
// emulated by 2 f16 HMMA + conversions).
#include <type_traits>
#include "sm80/attn.cuh"

// Defined by the sm90 family (kernels/src/attn_sm90.cu) when the build has it.
#pragma weak sa_attn_sm90_qk_int8_pv_fp8
#pragma weak sa_attn_sm90_qk_int8_pv_fp8_takes_q

extern "C" int sa_attn_qk_int8_pv_fp8_takes_q(const sa_attn_params* p) {
  if (p == nullptr) return sa::set_error(SA_ERR_INVALID_ARGUMENT, "sa_attn_qk_int8_pv_fp8_takes_q: null params"), -1;
  sa_route_row r;
  if (sa::route_call(p, SA_PV_FP8, &r) != SA_OK) return -1;
  return r.kernel == SA_KERNEL_SM90_PV_FP8 ? sa_attn_sm90_qk_int8_pv_fp8_takes_q(p) : 0;
}

extern "C" sa_status sa_attn_qk_int8_pv_fp8(const sa_attn_params* p, cudaStream_t stream) {
  SA_CHECK_ARG(p != nullptr, "sa_attn_qk_int8_pv_fp8: null params");
  sa_route_row r;
  const sa_status st = sa::route_call(p, SA_PV_FP8, &r);
  if (st != SA_OK) return st;
  if (r.kernel == SA_KERNEL_SM90_PV_FP8) return sa_attn_sm90_qk_int8_pv_fp8(p, stream);
  SA_CHECK_ARG(p->q_int8 != nullptr && p->q_scale != nullptr,
               "sa_attn_qk_int8_pv_fp8: the %s kernel reads Q quantized (q_int8, q_scale): p->q is for a kernel "
               "that sa_attn_qk_int8_pv_fp8_takes_q says takes it",
               sa_kernel_name(r.kernel));
  return sa::sm80::launch<true>(p, stream);  // attn_pv_fp8_kernel or _f16acc_kernel, as p->pv_accum_f16 says
}
