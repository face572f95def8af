// The arguments of an attention launch, shared by every attention family
// (mma.sync in src/sm80/, wgmma in src/sm90/): the C ABI's parameters, their
// validation and the values derived from them once per call.
#pragma once
#include <cstdint>
#include "common.cuh"
#include "config.cuh"
#include "sageattn/sageattn.h"

namespace sa {

struct AttnArgs {
  sa_attn_params p;
  int q_pad, k_pad;
  float scale_log2;  // sm_scale * log2(e), folded into the q scale
};

// Validation shared by every attention family (mma.sync and sm90).
inline sa_status check_attn_params(const sa_attn_params* p, bool pv_fp8, const char* fn) {
  SA_CHECK_ARG(p != nullptr, "%s: null params", fn);
  // Q quantized, or (fp8 P.V) as given for a kernel that quantizes it (sa_attn_qk_int8_pv_fp8_takes_q)
  SA_CHECK_ARG(((p->q_int8 && p->q_scale) || (pv_fp8 && p->q.data)) && p->k_int8 && p->k_scale && p->out,
               "%s: null tensor pointer", fn);
  SA_CHECK_ARG(p->batch > 0 && p->q_heads > 0 && p->kv_heads > 0 && p->q_len > 0 && p->kv_len > 0,
               "%s: sizes must be positive (batch %d, q_heads %d, kv_heads %d, q_len %d, kv_len %d)", fn, p->batch,
               p->q_heads, p->kv_heads, p->q_len, p->kv_len);
  SA_CHECK_ARG(p->q_heads % p->kv_heads == 0, "%s: q_heads (%d) must be a multiple of kv_heads (%d)", fn, p->q_heads,
               p->kv_heads);
  SA_CHECK_ARG(p->head_dim > 0 && p->head_dim <= SA_MAX_HEAD_DIM && p->head_dim % 8 == 0,
               "%s: head_dim must be a multiple of 8 in [8, %d], got %d", fn, SA_MAX_HEAD_DIM, p->head_dim);
  SA_CHECK_ARG(p->q_heads <= 65535 && p->batch <= 65535, "%s: too many heads or batches for the grid", fn);
  SA_CHECK_ARG(p->out_dtype == SA_DTYPE_F16 || p->out_dtype == SA_DTYPE_BF16, "%s: out dtype must be f16 or bf16", fn);
  SA_CHECK_ARG((reinterpret_cast<uintptr_t>(p->out) & 3) == 0 && p->out_stride_batch % 2 == 0 &&
                   p->out_stride_head % 2 == 0 && p->out_stride_seq % 2 == 0,
               "%s: out must be 4-byte aligned with even strides", fn);
  if (!pv_fp8) {
    sa_status st = check_view(p->v, "v");
    if (st != SA_OK) return st;
    SA_CHECK_ARG(p->v.dtype == SA_DTYPE_F16, "%s: v must be float16 for the fp16 PV path", fn);
    SA_CHECK_ARG(
        p->v.batch == p->batch && p->v.heads == p->kv_heads && p->v.seq == p->kv_len && p->v.dim == p->head_dim,
        "%s: v view [%d,%d,%d,%d] does not match [batch %d, kv_heads %d, kv_len %d, head_dim %d]", fn, p->v.batch,
        p->v.heads, p->v.seq, p->v.dim, p->batch, p->kv_heads, p->kv_len, p->head_dim);
  } else {
    SA_CHECK_ARG(p->v_fp8 && p->v_scale, "%s: v_fp8 and v_scale are required", fn);
  }
  SA_CHECK_ARG(p->pv_accum_f16 == 0 || (pv_fp8 && p->pv_accum_f16 == 1),
               "%s: pv_accum_f16 must be 0 or 1, and 1 only on the fp8 P.V path, got %d", fn, p->pv_accum_f16);
  return SA_OK;
}

inline AttnArgs make_attn_args(const sa_attn_params* p) {
  AttnArgs a;
  a.p = *p;
  a.q_pad = (int)sa_round_up(p->q_len, cfg::kBlockQ);
  a.k_pad = (int)sa_round_up(p->kv_len, cfg::kBlockK);
  a.scale_log2 = p->sm_scale * cfg::kLog2e;
  return a;
}

}  // namespace sa
