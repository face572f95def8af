/*
 * SageAttention kernels: the C ABI's own part, torch-free and CUDA-free (no
 * cuda_runtime.h), so that a host compiler alone can build against it
 * (kernels/src/abi.cu): the status codes and the calling thread's last error,
 * the ABI version, the head-dim and padding helpers, and the routing table
 * that decides which kernel serves an attention call.  sageattn.h includes it.
 */
#ifndef SAGEATTN_ABI_H_
#define SAGEATTN_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: per-batch sequence starts and lengths; 3: sa_quant_qkv; 4: head dims to 256;
 * 5: sa_abi_version and the routing table (sa_route); 6: sa_quant_qkv takes any
 * of Q, K, V, and sa_quant_q, sa_channel_stats, sa_quant_k, sa_quant_v_fp8 are gone;
 * 7: sa_attn_params.q / q_granularity, Q quantized by the sm90 kernel (sa_attn_qk_int8_pv_fp8_takes_q) */
#define SA_ABI_VERSION 7
#define SA_MAX_HEAD_DIM 256 /* the largest head_dim the kernels take (a multiple of 8) */

typedef enum sa_status { SA_OK = 0, SA_ERR_INVALID_ARGUMENT = 1, SA_ERR_UNSUPPORTED = 2, SA_ERR_CUDA = 3 } sa_status;

typedef enum sa_dtype { SA_DTYPE_F16 = 0, SA_DTYPE_BF16 = 1 } sa_dtype;

/* SA_ABI_VERSION of the library (a caller compiled against another header can tell). */
int sa_abi_version(void);
/* The message of the last error returned on the calling thread ("" if none yet). */
const char* sa_last_error_message(void);
const char* sa_status_string(sa_status s);

int sa_padded_head_dim(int head_dim); /* 64, 128, 192, 256, or 0 when unsupported */
int64_t sa_round_up(int64_t n, int64_t tile);

/* ---- Routing: which kernel serves an attention call.
 * One table (kernels/src/route_table.h), rows in order of preference: a call
 * runs the first row that matches its compute capability, head dim, P.V path
 * and accumulator and whose family the library has.  sa_attn_qk_int8_pv_fp8 /
 * _fp16 route through it, and the Python layer asks it (the `route` op) which
 * P.V path and accumulator a call gets when the caller leaves them open. */

/* The kernel families that hold attention kernels (families.json), as bits. */
typedef enum sa_family { SA_FAMILY_PV_FP16 = 1, SA_FAMILY_PV_FP8 = 2, SA_FAMILY_SM90 = 4 } sa_family;

typedef enum sa_kernel {
  SA_KERNEL_NONE = 0,
  SA_KERNEL_MMA_PV_FP16 = 1,       /* pv_fp16: attn_pv_fp16_kernel (mma.sync, fp32 accumulation) */
  SA_KERNEL_MMA_PV_FP8 = 2,        /* pv_fp8: attn_pv_fp8_kernel (e4m3 mma.sync, f32 tile accumulator) */
  SA_KERNEL_MMA_PV_FP8_F16ACC = 3, /* pv_fp8: attn_pv_fp8_f16acc_kernel (f16 tile accumulator) */
  SA_KERNEL_SM90_PV_FP8 = 4,       /* sm90: wgmma, fp8 P.V (accumulates in f32 either way) */
  SA_KERNEL_SM90_PV_FP16 = 5       /* sm90: wgmma, fp16 P.V */
} sa_kernel;

typedef enum sa_pv { SA_PV_FP16 = 0, SA_PV_FP8 = 1 } sa_pv;
#define SA_ROUTE_ANY (-1) /* a query's pv or pv_accum_f16 left to the table */

/* One row: `kernel` of `family` serves calls on compute capabilities
 * [cc_min, cc_max] (major * 10 + minor) at head dims [head_dim_min,
 * head_dim_max] that ask for P.V path `pv` and accumulator `pv_accum_f16`
 * (sa_attn_params.pv_accum_f16: 1 = V scaled to SA_V_MAX_F16ACC). */
typedef struct sa_route_row {
  sa_kernel kernel;
  sa_family family;
  int pv; /* sa_pv */
  int pv_accum_f16;
  int cc_min, cc_max;
  int head_dim_min, head_dim_max;
} sa_route_row;

typedef struct sa_route_query {
  int cc;           /* compute capability, major * 10 + minor */
  int head_dim;     /* the caller's head dim (not padded) */
  int pv;           /* SA_PV_FP16, SA_PV_FP8, or SA_ROUTE_ANY */
  int pv_accum_f16; /* 0, 1, or SA_ROUTE_ANY */
} sa_route_query;

/* The table: *rows set to its first row; returns the number of rows. */
int sa_route_table(const sa_route_row** rows);
/* The families this library can route to (sa_family bits): those linked in;
 * not sm90 when the environment variable SAGEATTN_SM90 is 0 (read once). */
unsigned sa_route_families(void);
/* The first row matching q among the families in `families`, into *out.
 * SA_ERR_UNSUPPORTED (reason in sa_last_error_message()) when none matches,
 * SA_ERR_INVALID_ARGUMENT for a NULL pointer or an out-of-range field. */
sa_status sa_route_in(const sa_route_query* q, unsigned families, sa_route_row* out);
/* sa_route_in(q, sa_route_families(), out): what this library runs for q. */
sa_status sa_route(const sa_route_query* q, sa_route_row* out);
/* "pv_fp16", "pv_fp8", "sm90"; "?" otherwise. */
const char* sa_family_name(sa_family f);
/* "mma_pv_fp16", "mma_pv_fp8", "mma_pv_fp8_f16acc", "sm90_pv_fp8", "sm90_pv_fp16"; "none" otherwise. */
const char* sa_kernel_name(sa_kernel k);

#ifdef __cplusplus
}
#endif
#endif /* SAGEATTN_ABI_H_ */
