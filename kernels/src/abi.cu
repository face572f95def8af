// The C ABI's own part (sageattn/abi.h): the calling thread's last error,
// status names, the ABI version, the head-dim and padding helpers, and the
// routing (route_table.h).  Host code only, built with the always-built quant
// family (families.json); it includes no CUDA header, so a host compiler
// builds it as well.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "route_table.h"
#include "sageattn/abi.h"

// One entry point of each attention family (sageattn.h), referenced weakly:
// non-null when the family is linked in.  Declared here with the same types
// as there, without the CUDA header (cudaStream_t is CUstream_st*).
struct CUstream_st;
extern "C" {
sa_status sa_attn_qk_int8_pv_fp16(const struct sa_attn_params* p, struct CUstream_st* stream);
sa_status sa_attn_qk_int8_pv_fp8(const struct sa_attn_params* p, struct CUstream_st* stream);
sa_status sa_attn_sm90_qk_int8_pv_fp8(const struct sa_attn_params* p, struct CUstream_st* stream);
}
#pragma weak sa_attn_qk_int8_pv_fp16
#pragma weak sa_attn_qk_int8_pv_fp8
#pragma weak sa_attn_sm90_qk_int8_pv_fp8

namespace sa {

static thread_local char g_err[1024] = "";

// Declared in common.cuh: stores the message, returns s.
sa_status set_error(sa_status s, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof(g_err), fmt, ap);
  va_end(ap);
  return s;
}

}  // namespace sa

extern "C" {

int sa_abi_version(void) { return SA_ABI_VERSION; }

const char* sa_last_error_message(void) { return sa::g_err; }

const char* sa_status_string(sa_status s) {
  switch (s) {
    case SA_OK:
      return "ok";
    case SA_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case SA_ERR_UNSUPPORTED:
      return "unsupported";
    case SA_ERR_CUDA:
      return "CUDA error";
  }
  return "unknown status";
}

int sa_padded_head_dim(int head_dim) {
  if (head_dim <= 0 || head_dim > SA_MAX_HEAD_DIM) return 0;
  return head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : head_dim <= 192 ? 192 : 256;
}

int64_t sa_round_up(int64_t n, int64_t tile) { return (n + tile - 1) / tile * tile; }

int sa_route_table(const sa_route_row** rows) {
  if (rows != nullptr) *rows = sa::route::kTable;
  return sa::route::kRows;
}

const char* sa_family_name(sa_family f) {
  switch (f) {
    case SA_FAMILY_PV_FP16:
      return "pv_fp16";
    case SA_FAMILY_PV_FP8:
      return "pv_fp8";
    case SA_FAMILY_SM90:
      return "sm90";
  }
  return "?";
}

const char* sa_kernel_name(sa_kernel k) {
  switch (k) {
    case SA_KERNEL_MMA_PV_FP16:
      return "mma_pv_fp16";
    case SA_KERNEL_MMA_PV_FP8:
      return "mma_pv_fp8";
    case SA_KERNEL_MMA_PV_FP8_F16ACC:
      return "mma_pv_fp8_f16acc";
    case SA_KERNEL_SM90_PV_FP8:
      return "sm90_pv_fp8";
    case SA_KERNEL_SM90_PV_FP16:
      return "sm90_pv_fp16";
    case SA_KERNEL_NONE:
      break;
  }
  return "none";
}

unsigned sa_route_families(void) {
  // SAGEATTN_SM90=0 keeps 9.0 devices on the mma.sync kernels (read once).
  static const bool sm90_off = [] {
    const char* e = std::getenv("SAGEATTN_SM90");
    return e != nullptr && std::strcmp(e, "0") == 0;
  }();
  unsigned f = 0;
  if (&sa_attn_qk_int8_pv_fp16 != nullptr) f |= SA_FAMILY_PV_FP16;
  if (&sa_attn_qk_int8_pv_fp8 != nullptr) f |= SA_FAMILY_PV_FP8;
  if (&sa_attn_sm90_qk_int8_pv_fp8 != nullptr && !sm90_off) f |= SA_FAMILY_SM90;
  return f;
}

sa_status sa_route_in(const sa_route_query* q, unsigned families, sa_route_row* out) {
  using sa::route::kRows;
  using sa::route::kTable;
  if (q == nullptr || out == nullptr) return sa::set_error(SA_ERR_INVALID_ARGUMENT, "sa_route: null query or result");
  if (q->pv != SA_ROUTE_ANY && q->pv != SA_PV_FP16 && q->pv != SA_PV_FP8)
    return sa::set_error(SA_ERR_INVALID_ARGUMENT, "sa_route: pv must be %d (fp16), %d (fp8) or %d (any), got %d",
                         SA_PV_FP16, SA_PV_FP8, SA_ROUTE_ANY, q->pv);
  if (q->pv_accum_f16 != SA_ROUTE_ANY && q->pv_accum_f16 != 0 && q->pv_accum_f16 != 1)
    return sa::set_error(SA_ERR_INVALID_ARGUMENT, "sa_route: pv_accum_f16 must be 0, 1 or %d (any), got %d",
                         SA_ROUTE_ANY, q->pv_accum_f16);
  auto asks = [&](const sa_route_row& r) {
    return (q->pv == SA_ROUTE_ANY || q->pv == r.pv) &&
           (q->pv_accum_f16 == SA_ROUTE_ANY || q->pv_accum_f16 == r.pv_accum_f16);
  };
  auto fits = [&](const sa_route_row& r) {
    return q->cc >= r.cc_min && q->cc <= r.cc_max && q->head_dim >= r.head_dim_min && q->head_dim <= r.head_dim_max;
  };
  for (int i = 0; i < kRows; ++i) {
    if (asks(kTable[i]) && fits(kTable[i]) && (families & kTable[i].family) != 0) {
      *out = kTable[i];
      return SA_OK;
    }
  }
  // None: say what would serve the call, from the same rows.
  char what[96];
  if (q->pv == SA_ROUTE_ANY)
    std::snprintf(what, sizeof(what), "an attention call");
  else
    std::snprintf(what, sizeof(what), "the %s P.V%s", q->pv == SA_PV_FP8 ? "FP8" : "FP16",
                  q->pv_accum_f16 == 1 ? " with an f16 accumulator" : "");
  int cc_min = 0;
  const sa_route_row* fit = nullptr;  // a row that fits the call but whose family is not here
  for (int i = 0; i < kRows; ++i) {
    if (!asks(kTable[i])) continue;
    if (q->head_dim >= kTable[i].head_dim_min && q->head_dim <= kTable[i].head_dim_max &&
        (cc_min == 0 || kTable[i].cc_min < cc_min))
      cc_min = kTable[i].cc_min;
    if (fits(kTable[i]) && fit == nullptr) fit = &kTable[i];
  }
  if (fit != nullptr)
    return sa::set_error(SA_ERR_UNSUPPORTED,
                         "%s on compute capability %d.%d, head_dim %d runs the %s kernel family, which this build "
                         "does not contain%s",
                         what, q->cc / 10, q->cc % 10, q->head_dim, sa_family_name(fit->family),
                         fit->family == SA_FAMILY_SM90 ? " or SAGEATTN_SM90=0 turns off" : "");
  if (cc_min == 0)
    return sa::set_error(SA_ERR_UNSUPPORTED, "%s has no kernel for head_dim %d (a multiple of 8 up to %d)", what,
                         q->head_dim, SA_MAX_HEAD_DIM);
  return sa::set_error(SA_ERR_UNSUPPORTED, "%s needs compute capability >= %d.%d; this GPU is %d.%d", what, cc_min / 10,
                       cc_min % 10, q->cc / 10, q->cc % 10);
}

sa_status sa_route(const sa_route_query* q, sa_route_row* out) { return sa_route_in(q, sa_route_families(), out); }

}  // extern "C"
