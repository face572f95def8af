// Family "pv_fp16" (sm80+): INT8 QK^T, FP16 PV with fp32 accumulation.
#include <type_traits>
#include "attn_kernel.cuh"

extern "C" sa_status sa_attn_qk_int8_pv_fp16(const sa_attn_params* p, cudaStream_t stream) {
  return sa::launch_attn<false>(p, stream);
}
