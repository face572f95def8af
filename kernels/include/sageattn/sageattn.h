/*
 * SageAttention kernels: torch-free C ABI.
 *
 * All tensors are plain device pointers with shapes and strides counted in
 * ELEMENTS.  The last (head-dim) axis of every user tensor must be contiguous,
 * 16-byte aligned, and the head dim a multiple of 8.  Every function is
 * asynchronous on the given stream and returns SA_OK or an error code; the
 * message of the last error on the calling thread is sa_last_error_message().
 *
 * Internal (quantized) tensors have fixed, packed layouts:
 *   q_int8  [B, Hq, Nq_pad, Dp]  int8     Nq_pad = roundup(Nq, SA_BLOCK_Q)
 *   q_scale [B, Hq, Nq_pad/16, 8] fp32   scale of rows {16s+g, 16s+g+8}
 *   k_int8  [B, Hk, Nk_pad, Dp]  int8     Nk_pad = roundup(Nk, SA_BLOCK_K)
 *   k_scale [B, Hk, Nk_pad/SA_BLOCK_K, 4] fp32  scale c covers keys of the
 *           tile whose index i satisfies (i % 8) / 2 == c
 *   v_fp8   [B, Hk, Dp, Nk_pad]  e4m3, V transposed, keys of every group of 16
 *           stored in the order of sa_v_key_perm() (matches the mma layout)
 *   v_scale, v_mean [B, Hk, Dp]  fp32
 * Dp = the head dim rounded up to 64, 128, 192 or 256 (sa_padded_head_dim;
 *   head_dim > SA_MAX_HEAD_DIM is rejected).
 * Coarser granularities (per-warp, per-block) are stored in the same layout
 * with the scale replicated, so the attention kernels have one code path.
 *
 * Variable-length batches (packed sequences, key-padding masks): a view's
 * seq_start / seq_len (device int32 [batch]) place sequence b anywhere on the
 * seq axis with its own length; the quantized tensors stay dense, padded per
 * batch to the maximum (Nq = the view's seq), rows past a sequence's length
 * zero.  K smoothing and the V statistics cover each sequence's own rows.  The
 * attention takes per-batch query / key lengths (sa_attn_params) and writes
 * output rows of batch b from q_seq_start[b]; causal masking stays top-left
 * aligned per sequence.  Lengths are clamped to [0, seq]; starts are trusted.
 */
#ifndef SAGEATTN_SAGEATTN_H_
#define SAGEATTN_SAGEATTN_H_

#include <cuda_runtime.h>
#include <stdint.h>
#include "sageattn/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SA_BLOCK_Q 128        /* Q padding and per-block Q scale granularity (rows) */
#define SA_V_MAX 448.0f       /* e4m3 V range: the largest finite e4m3 */
#define SA_V_MAX_F16ACC 2.25f /* e4m3 V range for pv_accum_f16 */
#define SA_BLOCK_K 64         /* keys per tile */

typedef enum sa_granularity {
  SA_GRAN_PER_BLOCK = 0, /* one scale per 128 query rows / per 64-key tile */
  SA_GRAN_PER_WARP = 1,  /* one scale per 16 query rows / per 64-key tile */
  SA_GRAN_PER_THREAD = 2 /* q: rows {g, g+8} of each 16-row slice; k: 4 key classes per tile */
} sa_granularity;

/* A [batch, heads, seq, dim] view of a 16-bit tensor, dim contiguous. */
typedef struct sa_view {
  const void* data;
  sa_dtype dtype;
  int batch, heads, seq, dim;
  int64_t stride_batch, stride_head, stride_seq; /* elements */
  /* Device int32 [batch], or NULL: sequence b starts at row 0 of batch b
   * (stride_batch).  Else it starts at row seq_start[b] of the seq axis
   * (data + seq_start[b] * stride_seq) and stride_batch is not used: packed
   * sequences [total, heads, dim], or a left-padded batch. */
  const int32_t* seq_start;
  /* Device int32 [batch], or NULL: every sequence has `seq` rows.  Else
   * sequence b has seq_len[b] (clamped to [0, seq]); `seq` is the maximum,
   * which sizes the grids and the padded quantized layouts. */
  const int32_t* seq_len;
} sa_view;

/* Q, K and V quantized: Q -> int8 with per-group scales; K -> int8, smoothed
 * (when smooth_k) by subtracting each channel's mean over the sequence's rows;
 * V -> e4m3 with a per-channel scale amax / v_scale_max (amax of V less its
 * channel mean when smooth_v), transposed to [Dp, Nk_pad].  Two kernel
 * launches after one memset of `stats`: the channel statistics of K and V with
 * Q's quantization, then K and V.  Any of q, k, v may be left out (data NULL)
 * and its outputs are then not touched: the fp16 P.V path quantizes Q and K
 * only, and a V laid out apart from K is quantized by a call of its own.  The
 * parts given share batch, dtype and dim; k and v share their shape
 * [batch, Hk, Nk, dim], seq_start and seq_len; q has a multiple of Hk heads.
 * The K and V sums are float atomics: their order, and so their last bit, may
 * differ from run to run. */
typedef struct sa_quant_qkv_params {
  sa_view q, k, v; /* data NULL: that part left out */
  sa_granularity granularity;
  int smooth_k, smooth_v;
  int8_t* q_int8;    /* [B,Hq,Nq_pad,Dp] */
  float* q_scale;    /* [B,Hq,Nq_pad/16,8] */
  int8_t* k_int8;    /* [B,Hk,Nk_pad,Dp] */
  float* k_scale;    /* [B,Hk,Nk_pad/SA_BLOCK_K,4] */
  uint8_t* v_fp8;    /* [B,Hk,Dp,Nk_pad] */
  float* v_scale;    /* [B,Hk,Dp] */
  float* v_mean;     /* [B,Hk,Dp]: the means when smooth_v, else zeros; may be NULL when !smooth_v */
  float v_scale_max; /* the e4m3 range V is scaled to: SA_V_MAX (0 means it), or SA_V_MAX_F16ACC for pv_accum_f16 */
  void* stats; /* scratch of sa_quant_qkv_stats_bytes(p) bytes (4-byte aligned), busy until the call's work is done */
} sa_quant_qkv_params;

typedef struct sa_attn_params {
  const int8_t* q_int8;
  const float* q_scale;
  const int8_t* k_int8;
  const float* k_scale;
  int batch, q_heads, kv_heads, q_len, kv_len, head_dim;
  /* PV fp16 path: V as given by the user (must be SA_DTYPE_F16), [B,Hk,Nk,D] view. */
  sa_view v;
  /* PV fp8 path: quantized V from sa_quant_qkv. */
  const uint8_t* v_fp8;
  const float* v_scale;
  const float* v_mean; /* NULL: no smoothing of V */
  /* PV fp8 path: each 64-key tile's P.V accumulated in f16 (twice the MMA rate
   * on sm_89 and sm_120), then added into the fp32 output accumulator; V must
   * have been quantized with scale_max SA_V_MAX_F16ACC so that a tile's sums
   * fit f16 (64 keys x P <= 448 x |V| <= 2.25 < 65504).  0: f32 accumulation.
   * The sm90 (wgmma) kernel accumulates in f32 either way. */
  int pv_accum_f16;
  /* Output [B,Hq,Nq,head_dim] view, dtype out_dtype. */
  void* out;
  sa_dtype out_dtype;
  int64_t out_stride_batch, out_stride_head, out_stride_seq;
  float* lse;     /* [B,Hq,Nq] natural-log LSE of the (dequantized, scaled) scores, or NULL */
  int causal;     /* top-left aligned: query i sees keys j <= i (torch SDPA is_causal) */
  float sm_scale; /* softmax scale, e.g. 1/sqrt(head_dim) */
  /* Device memory for a kernel that needs scratch (the sm90 fp16 path: V^T),
   * at least sa_attn_qk_int8_pv_fp16_workspace_bytes(p) bytes, 16-byte aligned,
   * not touched by anything else until the call's work on its stream is done;
   * or NULL: the library then takes it, stream-ordered, from a memory pool of
   * its own (which an application's allocator does not see). */
  void* workspace;
  int64_t workspace_bytes;
  /* Variable-length batches (device int32 [batch] each, or NULL).
   * q_seq_start: output rows of batch b start at row q_seq_start[b] of out
   *   (out_stride_batch unused); NULL: row 0 of batch b.  Only the output is
   *   placed by it (Q is the dense padded q_int8); the fp16 path reads V
   *   through p.v, whose seq_start / seq_len place it.
   * q_seq_len: valid query rows of batch b (NULL: q_len); rows past it are
   *   neither computed nor written (lse rows too: lse stays [B, Hq, q_len]).
   * kv_seq_len: valid keys of batch b (NULL: kv_len); a batch with none
   *   writes zeros (lse -inf). */
  const int32_t* q_seq_start;
  const int32_t* q_seq_len;
  const int32_t* kv_seq_len;
  /* Q as the caller gives it (data NULL: not given), for a kernel that
   * quantizes Q itself, as sa_quant_qkv would with q_granularity (the same
   * bytes): where sa_attn_qk_int8_pv_fp8_takes_q(p) says 1, the call reads q
   * instead of q_int8 / q_scale, which may then be NULL.  A view [batch,
   * q_heads, q_len, head_dim] of dtype out_dtype. */
  sa_view q;
  sa_granularity q_granularity;
} sa_attn_params;

/* Key index stored at position p (0..15) of each 16-key group of v_fp8. */
int sa_v_key_perm(int p);

/* Bytes of scratch sa_quant_qkv needs for p (0: none), -1 for a NULL p. */
int64_t sa_quant_qkv_stats_bytes(const sa_quant_qkv_params* p);
sa_status sa_quant_qkv(const sa_quant_qkv_params* p, cudaStream_t stream);

/* family pv_fp16 (sm80+).  The kernel that runs is the routing table's
 * (abi.h, sa_route): on a compute capability 9.0 device the sm90 family's when
 * that family is in the build (SAGEATTN_SM90=0: mma.sync). */
sa_status sa_attn_qk_int8_pv_fp16(const sa_attn_params* p, cudaStream_t stream);
/* Bytes of p->workspace that sa_attn_qk_int8_pv_fp16 uses for p on the current
 * device (0: none); -1 with the reason in sa_last_error_message(). */
int64_t sa_attn_qk_int8_pv_fp16_workspace_bytes(const sa_attn_params* p);
/* family pv_fp8 (sm89+).  The kernel that runs is the routing table's (abi.h,
 * sa_route): on a compute capability 9.0 device up to head dim 128 the sm90
 * family's when that family is in the build (same inputs, same function; the
 * environment variable SAGEATTN_SM90=0 keeps it on mma.sync); SA_ERR_UNSUPPORTED
 * with the table's reason where no kernel serves the call (below 8.9). */
sa_status sa_attn_qk_int8_pv_fp8(const sa_attn_params* p, cudaStream_t stream);
/* 1 when the kernel sa_attn_qk_int8_pv_fp8 runs for p on the current device
 * quantizes p->q itself: the sm90 family's, padded head dim up to 128, q a
 * dense view (no seq_start / seq_len) of the call's shape and of dtype
 * out_dtype, and SAGEATTN_SM90_QUANT_Q not "0"; else 0 (Q comes
 * quantized by sa_quant_qkv).  -1 with the reason in sa_last_error_message()
 * when no kernel serves p. */
int sa_attn_qk_int8_pv_fp8_takes_q(const sa_attn_params* p);
int sa_attn_sm90_qk_int8_pv_fp8_takes_q(const sa_attn_params* p);
/* family sm90 (sm_90a only: wgmma).  Same contract as sa_attn_qk_int8_pv_fp8;
 * fails with SA_ERR_CUDA on any other device. */
sa_status sa_attn_sm90_qk_int8_pv_fp8(const sa_attn_params* p, cudaStream_t stream);
/* family sm90: same contract as sa_attn_qk_int8_pv_fp16.  V is transposed to
 * f16 V^T (B x Hk x Dp x Nk_pad halves) into p->workspace, or when that is
 * NULL into stream-ordered scratch of a memory pool of the library's own
 * (freed in stream order after the kernel). */
sa_status sa_attn_sm90_qk_int8_pv_fp16(const sa_attn_params* p, cudaStream_t stream);
int64_t sa_attn_sm90_qk_int8_pv_fp16_workspace_bytes(const sa_attn_params* p);

#ifdef __cplusplus
}
#endif
#endif /* SAGEATTN_SAGEATTN_H_ */
