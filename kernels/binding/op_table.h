// The torch ops of sageattention, written once for both bindings: their
// schemas, argument checks and messages, and the calls into the C ABI
// (sageattn.h).  ops.cc (classic ATen, torch < 2.10) and ops_stable.cc (the
// stable ABI, torch >= 2.10) each supply a tensor adapter A and register
// Ops<A>; the Python layer and the tests see the same ops, schemas and error
// texts from either.
//
// The adapter A provides:
//   Tensor, OptTensor             the tensor types (at::Tensor / torch::stable::Tensor)
//   In, OptIn                     how the ops take them (const& or by value)
//   ScalarType                    its scalar type enum (Half, BFloat16, Char, ...)
//   check(ok, args...)            raise the op's error with the args streamed into one message
//   sizes(t), strides(t), device(t), dtype_name(st)   printable as c10 prints them
//   same_device(a, b)
//   empty(like, shape, dtype)     an uninitialised tensor on like's device
//   Guard(t)                      makes t's CUDA device current in its scope
//   stream()                      the current CUDA stream (of the current device)
// Tensors themselves are used through the methods both tensor types share:
// defined, is_cuda, dim, size, stride, scalar_type, numel, is_contiguous,
// data_ptr.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <tuple>
#include <vector>

#include "sageattn/sageattn.h"

// The attention families may be left out of a build for archs that cannot run
// them; their entry points are weak so the module still loads, and calling a
// missing one is a clear error.
#pragma weak sa_attn_qk_int8_pv_fp16
#pragma weak sa_attn_qk_int8_pv_fp16_workspace_bytes
#pragma weak sa_attn_qk_int8_pv_fp8
#pragma weak sa_attn_qk_int8_pv_fp8_takes_q

namespace sa_binding {

// The ops, for the bindings' registration: X(name) once per op.
#define SA_FOR_EACH_OP(X) X(quant_q) X(quant_k) X(quant_v_fp8) X(quant_qkv) X(attn_pv_fp16) X(attn_pv_fp8) X(attn)
// `route` takes no tensor: each binding registers it apart, for
// CompositeExplicitAutograd (what a call without a tensor to dispatch on reaches).

// tensor_layout: 0 HND, 1 NHD, 2 packed [total, heads, head_dim].  The trailing
// Tensor? arguments are int32 [batch] sequence starts / lengths (sageattn.h):
// varlen batches and key-padding masks; their defaults keep dense calls short.
// `quant_qkv` is quant_q, quant_k and (v given) quant_v_fp8 in one C call, two
// launches (without v its three V outputs are empty).  `attn` is the whole
// forward in one call (what sageattn runs): quantization and attention without
// a trip through Python between the kernels.
// `route` (no tensors, so not in SA_FOR_EACH_OP) asks the routing table
// (sageattn/abi.h, sa_route) which kernel serves a call: [kernel, family, pv,
// pv_accum_f16] of the chosen row; pv / pv_accum_f16 -1 leave them to the
// table; families -1: this library's own (sa_route_families), else a mask.
// pv_accum_f16 (sageattn.h): the fp8 P.V accumulates each key tile in f16; V
// is then quantized with scale_max SA_V_MAX_F16ACC (quant_v_fp8's scale_max
// for the separate ops, set by attn itself).
inline constexpr const char* kSchemas[] = {
    "quant_q(Tensor q, int tensor_layout, int granularity, Tensor? seq_start=None, Tensor? seq_len=None, "
    "int max_seq=0) -> (Tensor q_int8, Tensor q_scale)",
    "quant_k(Tensor k, int tensor_layout, int granularity, bool smooth_k, Tensor? seq_start=None, "
    "Tensor? seq_len=None, int max_seq=0) -> (Tensor k_int8, Tensor k_scale)",
    "quant_v_fp8(Tensor v, int tensor_layout, bool smooth_v, Tensor? seq_start=None, Tensor? seq_len=None, "
    "int max_seq=0, float scale_max=448.0) -> (Tensor v_fp8, Tensor v_scale, Tensor v_mean)",
    "quant_qkv(Tensor q, Tensor k, Tensor? v, int tensor_layout, int granularity, bool smooth_k, bool smooth_v, "
    "Tensor? q_seq_start=None, Tensor? q_seq_len=None, int max_q=0, Tensor? kv_seq_start=None, "
    "Tensor? kv_seq_len=None, int max_kv=0, float scale_max=448.0) -> (Tensor q_int8, Tensor q_scale, "
    "Tensor k_int8, Tensor k_scale, Tensor v_fp8, Tensor v_scale, Tensor v_mean)",
    "attn_pv_fp16(Tensor q_int8, Tensor q_scale, Tensor k_int8, Tensor k_scale, Tensor v, int tensor_layout, "
    "int q_len, bool is_causal, float sm_scale, bool return_lse, ScalarType out_dtype, Tensor? q_seq_start=None, "
    "Tensor? q_seq_len=None, Tensor? kv_seq_start=None, Tensor? kv_seq_len=None, int q_total=0, int kv_len=0) "
    "-> (Tensor out, Tensor lse)",
    "attn_pv_fp8(Tensor q_int8, Tensor q_scale, Tensor k_int8, Tensor k_scale, Tensor v_fp8, Tensor v_scale, "
    "Tensor? v_mean, int tensor_layout, int q_len, int kv_len, int head_dim, bool is_causal, float sm_scale, "
    "bool return_lse, ScalarType out_dtype, Tensor? q_seq_start=None, Tensor? q_seq_len=None, "
    "Tensor? kv_seq_len=None, int q_total=0, bool pv_accum_f16=False) -> (Tensor out, Tensor lse)",
    "attn(Tensor q, Tensor k, Tensor v, int tensor_layout, bool is_causal, int granularity, float sm_scale, "
    "bool smooth_k, bool smooth_v, bool pv_fp8, bool return_lse, Tensor? kv_seq_start=None, "
    "Tensor? kv_seq_len=None, bool pv_accum_f16=False) -> (Tensor out, Tensor lse)",
    "route(int cc, int head_dim, int pv=-1, int pv_accum_f16=-1, int families=-1) -> int[]",
};

constexpr int64_t kHND = 0, kNHD = 1,
                  kPacked = 2;  // kPacked: [total, heads, head_dim], sequences by seq_start / seq_len

using Shape = std::vector<int64_t>;

// A shape printed as c10 prints one: "[1, 2, 3]".
struct Dims {
  const Shape& v;
};
inline std::ostream& operator<<(std::ostream& os, const Dims& d) {
  os << "[";
  for (std::size_t i = 0; i < d.v.size(); ++i) os << (i ? ", " : "") << d.v[i];
  return os << "]";
}

inline const char* layout_name(int64_t layout) {
  return layout == kHND   ? "HND [batch, heads, seq, head_dim]"
         : layout == kNHD ? "NHD [batch, seq, heads, head_dim]"
                          : "packed [total, heads, head_dim]";
}

template <typename A>
struct Ops {
  using Tensor = typename A::Tensor;
  using OptTensor = typename A::OptTensor;
  using In = typename A::In;
  using OptIn = typename A::OptIn;
  using ST = typename A::ScalarType;

  template <typename T>
  static T* ptr(const Tensor& t) {
    return static_cast<T*>(t.data_ptr());
  }
  static bool is_half_or_bf16(ST t) { return t == ST::Half || t == ST::BFloat16; }

  static void check_status(sa_status s, const char* what) {
    A::check(s == SA_OK, "sageattention: ", what, " failed (", sa_status_string(s), "): ", sa_last_error_message());
  }

  static void check_layout(int64_t layout) {
    A::check(layout == kHND || layout == kNHD || layout == kPacked,
             "sageattention: tensor_layout must be 0 (HND), 1 (NHD) or 2 (packed), got ", layout);
  }

  // A per-batch int32 array (sequence starts or lengths): 1-D, contiguous, on `like`'s device; NULL when absent.
  static const int32_t* batch_array(const OptTensor& t, int64_t batch, const char* name, const Tensor& like) {
    if (!t.has_value()) return nullptr;
    A::check(A::same_device(*t, like), "sageattention: ", name, " is on ", A::device(*t), " but the data is on ",
             A::device(like));
    A::check(t->scalar_type() == ST::Int && t->dim() == 1 && t->numel() == batch && t->is_contiguous(),
             "sageattention: ", name, " must be a contiguous 1-D int32 tensor of ", batch,
             " entries (one per batch), got ", A::dtype_name(t->scalar_type()), " ", A::sizes(*t));
    return static_cast<const int32_t*>(t->data_ptr());
  }

  // [B, H, N, D] view of a user tensor in the given layout.  Packed (layout 2):
  // t is [total, H, D]; sequence b is rows seq_start[b] .. + seq_len[b] (both
  // required), max_seq the longest.  Dense layouts take optional seq_start
  // (absolute rows of the seq axis: stride_batch is then unused) and seq_len.
  static sa_view make_view(const Tensor& t, int64_t layout, const char* name, const OptTensor& seq_start = {},
                           const OptTensor& seq_len = {}, int64_t max_seq = 0) {
    A::check(t.defined(), "sageattention: ", name, " is undefined");
    A::check(t.is_cuda(), "sageattention: ", name, " must be a CUDA tensor, got device ", A::device(t));
    const int64_t rank = layout == kPacked ? 3 : 4;
    A::check(t.dim() == rank, "sageattention: ", name, " must be ", rank, "-D in layout ", layout_name(layout),
             ", got ", t.dim(), "-D with shape ", A::sizes(t));
    A::check(is_half_or_bf16(t.scalar_type()), "sageattention: ", name, " must be float16 or bfloat16, got ",
             A::dtype_name(t.scalar_type()));
    A::check(t.stride(rank - 1) == 1, "sageattention: ", name,
             " must be contiguous in its last (head_dim) dimension, got stride ", t.stride(rank - 1));
    const int64_t d = t.size(rank - 1);
    A::check(d > 0 && d <= SA_MAX_HEAD_DIM && d % 8 == 0, "sageattention: ", name,
             " head_dim must be a multiple of 8 and at most ", SA_MAX_HEAD_DIM, " here (pad in Python), got ", d);
    bool strides_ok = reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
    for (int64_t i = 0; i + 1 < rank; ++i) strides_ok = strides_ok && t.stride(i) % 8 == 0;
    A::check(strides_ok, "sageattention: ", name,
             " must be 16-byte aligned with strides that are multiples of 8 elements, got strides ", A::strides(t));
    sa_view v{};
    v.data = t.data_ptr();
    v.dtype = t.scalar_type() == ST::Half ? SA_DTYPE_F16 : SA_DTYPE_BF16;
    v.dim = (int)d;
    if (layout == kPacked) {
      A::check(seq_start.has_value() && seq_len.has_value() && max_seq > 0, "sageattention: ", name,
               " in the packed layout needs seq_start, seq_len (int32, one per sequence) and max_seq > 0");
      A::check(t.size(0) > 0 && t.size(1) > 0, "sageattention: ", name, " has an empty dimension: ", A::sizes(t));
      A::check(max_seq < (1LL << 31) && t.size(1) <= 65535 && seq_len->numel() <= 65535 && seq_len->numel() > 0,
               "sageattention: ", name, " is too large or has no sequence: ", A::sizes(t), ", ", seq_len->numel(),
               " sequences, max_seq ", max_seq);
      v.batch = (int)seq_len->numel();
      v.heads = (int)t.size(1);
      v.seq = (int)max_seq;
      v.stride_batch = 0;
      v.stride_head = t.stride(1);
      v.stride_seq = t.stride(0);
    } else {
      const int hd = layout == kHND ? 1 : 2, nd = layout == kHND ? 2 : 1;
      A::check(t.size(0) > 0 && t.size(hd) > 0 && t.size(nd) > 0, "sageattention: ", name,
               " has an empty dimension: ", A::sizes(t));
      A::check(t.size(nd) < (1LL << 31) && t.size(hd) <= 65535 && t.size(0) <= 65535, "sageattention: ", name,
               " is too large: ", A::sizes(t));
      A::check(max_seq == 0 || max_seq == t.size(nd), "sageattention: max_seq (", max_seq, ") of ", name,
               " is for the packed layout; in layout ", layout_name(layout), " it must be 0 or ", t.size(nd));
      v.batch = (int)t.size(0);
      v.heads = (int)t.size(hd);
      v.seq = (int)t.size(nd);
      v.stride_batch = t.stride(0);
      v.stride_head = t.stride(hd);
      v.stride_seq = t.stride(nd);
    }
    v.seq_start = batch_array(seq_start, v.batch, "seq_start", t);
    v.seq_len = batch_array(seq_len, v.batch, "seq_len", t);
    return v;
  }

  static sa_granularity to_gran(int64_t g) {
    A::check(g == SA_GRAN_PER_BLOCK || g == SA_GRAN_PER_WARP || g == SA_GRAN_PER_THREAD,
             "sageattention: granularity must be 0 (per_block), 1 (per_warp) or 2 (per_thread), got ", g);
    return static_cast<sa_granularity>(g);
  }

  // A tensor one of our ops produced (quant_*): dtype, shape, device of q, contiguous.
  static void check_internal(const Tensor& t, const char* name, ST dt, const Shape& shape, const Tensor& q) {
    A::check(t.defined() && t.is_cuda(), "sageattention: ", name, " must be a CUDA tensor");
    A::check(A::same_device(t, q), "sageattention: ", name, " is on ", A::device(t), " but q is on ", A::device(q));
    A::check(t.scalar_type() == dt, "sageattention: ", name, " must have dtype ", A::dtype_name(dt), ", got ",
             A::dtype_name(t.scalar_type()));
    bool same = t.dim() == (int64_t)shape.size();
    for (std::size_t i = 0; same && i < shape.size(); ++i) same = t.size((int64_t)i) == shape[i];
    A::check(same, "sageattention: ", name, " must have shape ", Dims{shape}, ", got ", A::sizes(t));
    A::check(t.is_contiguous(), "sageattention: ", name, " must be contiguous");
  }

  // The quantized tensors of a call's parts; undefined where a part is left out.
  struct Quant {
    Tensor q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean;
  };

  // sa_quant_qkv's outputs for the parts qp names (a view with data), in sageattn.h's layouts:
  // f(Quant's tensor, qp's pointer to it, shape, dtype) for each, in one order.  `quantize` allocates
  // them as tensors, `attn` carves them from one workspace.
  template <typename F>
  static void for_each_output(sa_quant_qkv_params& qp, F&& f) {
    if (qp.q.data != nullptr) {
      const sa_view& v = qp.q;
      const int64_t dp = sa_padded_head_dim(v.dim), n_pad = sa_round_up(v.seq, SA_BLOCK_Q);
      f(&Quant::q_int8, qp.q_int8, Shape{v.batch, v.heads, n_pad, dp}, ST::Char);
      f(&Quant::q_scale, qp.q_scale, Shape{v.batch, v.heads, n_pad / 16, 8}, ST::Float);
    }
    if (qp.k.data != nullptr) {
      const sa_view& v = qp.k;
      const int64_t dp = sa_padded_head_dim(v.dim), n_pad = sa_round_up(v.seq, SA_BLOCK_K);
      f(&Quant::k_int8, qp.k_int8, Shape{v.batch, v.heads, n_pad, dp}, ST::Char);
      f(&Quant::k_scale, qp.k_scale, Shape{v.batch, v.heads, n_pad / SA_BLOCK_K, 4}, ST::Float);
    }
    if (qp.v.data != nullptr) {
      const sa_view& v = qp.v;
      const int64_t dp = sa_padded_head_dim(v.dim), n_pad = sa_round_up(v.seq, SA_BLOCK_K);
      f(&Quant::v_fp8, qp.v_fp8, Shape{v.batch, v.heads, dp, n_pad}, ST::Float8_e4m3fn);
      f(&Quant::v_scale, qp.v_scale, Shape{v.batch, v.heads, dp}, ST::Float);
      f(&Quant::v_mean, qp.v_mean, Shape{v.batch, v.heads, dp}, ST::Float);
    }
  }
  // A C pointer field set to device memory at `at`.
  template <typename P>
  static void point(P*& field, void* at) {
    field = static_cast<P*>(at);
  }

  // One sa_quant_qkv call on the parts qp names: their outputs allocated on `like`'s device, and the
  // scratch taken from torch's allocator.
  static Quant quantize(sa_quant_qkv_params qp, const Tensor& like, const char* what) {
    Quant r;
    for_each_output(qp, [&](Tensor Quant::*t, auto*& field, const Shape& shape, ST dtype) {
      r.*t = A::empty(like, shape, dtype);
      point(field, (r.*t).data_ptr());
    });
    Tensor stats = A::empty(like, {std::max<int64_t>(sa_quant_qkv_stats_bytes(&qp) / 4, 1)}, ST::Float);
    qp.stats = ptr<float>(stats);
    check_status(sa_quant_qkv(&qp, A::stream(like)), what);
    return r;
  }

  static void check_scale_max(double scale_max, const char* op) {
    A::check(scale_max > 0 && scale_max <= SA_V_MAX, "sageattention: ", op, " scale_max must be in (0, ", SA_V_MAX,
             "] (", SA_V_MAX, " for the f32-accumulated P.V, ", SA_V_MAX_F16ACC, " for pv_accum_f16), got ", scale_max);
  }

  static std::tuple<Tensor, Tensor> quant_q(In q, int64_t layout, int64_t gran, OptIn seq_start, OptIn seq_len,
                                            int64_t max_seq) {
    check_layout(layout);
    sa_quant_qkv_params qp{};
    qp.q = make_view(q, layout, "q", seq_start, seq_len, max_seq);
    qp.granularity = to_gran(gran);
    typename A::Guard guard(q);
    Quant r = quantize(qp, q, "quant_q");
    return {r.q_int8, r.q_scale};
  }

  static std::tuple<Tensor, Tensor> quant_k(In k, int64_t layout, int64_t gran, bool smooth_k, OptIn seq_start,
                                            OptIn seq_len, int64_t max_seq) {
    check_layout(layout);
    sa_quant_qkv_params qp{};
    qp.k = make_view(k, layout, "k", seq_start, seq_len, max_seq);
    qp.granularity = to_gran(gran);
    qp.smooth_k = smooth_k ? 1 : 0;
    typename A::Guard guard(k);
    Quant r = quantize(qp, k, "quant_k");
    return {r.k_int8, r.k_scale};
  }

  static std::tuple<Tensor, Tensor, Tensor> quant_v_fp8(In v, int64_t layout, bool smooth_v, OptIn seq_start,
                                                        OptIn seq_len, int64_t max_seq, double scale_max) {
    check_layout(layout);
    check_scale_max(scale_max, "quant_v_fp8");
    sa_quant_qkv_params qp{};
    qp.v = make_view(v, layout, "v", seq_start, seq_len, max_seq);
    qp.smooth_v = smooth_v ? 1 : 0;
    qp.v_scale_max = (float)scale_max;
    typename A::Guard guard(v);
    Quant r = quantize(qp, v, "quant_v_fp8");
    return {r.v_fp8, r.v_scale, r.v_mean};
  }

  // Q, K and (v given) V of one call: what quant_qkv and attn run.
  static Quant quantize_qkv(const Tensor& q, const Tensor& k, const OptTensor& v, int64_t layout, int64_t gran,
                            bool smooth_k, bool smooth_v, const OptTensor& q_seq_start, const OptTensor& q_seq_len,
                            int64_t max_q, const OptTensor& kv_seq_start, const OptTensor& kv_seq_len, int64_t max_kv,
                            double scale_max) {
    check_layout(layout);
    check_scale_max(scale_max, "quant_qkv");
    sa_quant_qkv_params qp{};
    qp.q = make_view(q, layout, "q", q_seq_start, q_seq_len, max_q);
    qp.k = make_view(k, layout, "k", kv_seq_start, kv_seq_len, max_kv);
    if (v.has_value()) qp.v = make_view(*v, layout, "v", kv_seq_start, kv_seq_len, max_kv);
    qp.granularity = to_gran(gran);
    qp.smooth_k = smooth_k ? 1 : 0;
    qp.smooth_v = smooth_v ? 1 : 0;
    qp.v_scale_max = (float)scale_max;
    typename A::Guard guard(q);
    return quantize(qp, q, "quant_qkv");
  }

  static std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor> quant_qkv(
      In q, In k, OptIn v, int64_t layout, int64_t gran, bool smooth_k, bool smooth_v, OptIn q_seq_start,
      OptIn q_seq_len, int64_t max_q, OptIn kv_seq_start, OptIn kv_seq_len, int64_t max_kv, double scale_max) {
    Quant r = quantize_qkv(q, k, v, layout, gran, smooth_k, smooth_v, q_seq_start, q_seq_len, max_q, kv_seq_start,
                           kv_seq_len, max_kv, scale_max);
    if (!v.has_value()) {  // the op's V outputs are tensors either way: empty ones
      r.v_fp8 = A::empty(q, {0}, ST::Float8_e4m3fn);
      r.v_scale = A::empty(q, {0}, ST::Float);
      r.v_mean = A::empty(q, {0}, ST::Float);
    }
    return {r.q_int8, r.q_scale, r.k_int8, r.k_scale, r.v_fp8, r.v_scale, r.v_mean};
  }

  struct QKInfo {
    int64_t b, hq, hk, q_pad, k_pad, dp;
  };

  static QKInfo check_qk(const Tensor& q_int8, const Tensor& q_scale, const Tensor& k_int8, const Tensor& k_scale,
                         int64_t q_len, int64_t kv_len) {
    A::check(q_int8.defined() && q_int8.is_cuda() && q_int8.dim() == 4 && q_int8.scalar_type() == ST::Char,
             "sageattention: q_int8 must be a 4-D int8 CUDA tensor [B, Hq, Nq_pad, Dp] from quant_q");
    A::check(k_int8.defined() && k_int8.is_cuda() && k_int8.dim() == 4 && k_int8.scalar_type() == ST::Char,
             "sageattention: k_int8 must be a 4-D int8 CUDA tensor [B, Hk, Nk_pad, Dp] from quant_k");
    QKInfo i{q_int8.size(0), q_int8.size(1), k_int8.size(1), q_int8.size(2), k_int8.size(2), q_int8.size(3)};
    A::check(i.dp > 0 && sa_padded_head_dim((int)i.dp) == i.dp,
             "sageattention: padded head_dim of q_int8 must be 64, 128, 192 or 256, got ", i.dp);
    A::check(q_len > 0 && sa_round_up(q_len, SA_BLOCK_Q) == i.q_pad, "sageattention: q_len ", q_len,
             " does not match q_int8's padded length ", i.q_pad);
    A::check(kv_len > 0 && sa_round_up(kv_len, SA_BLOCK_K) == i.k_pad, "sageattention: kv_len ", kv_len,
             " does not match k_int8's padded length ", i.k_pad);
    A::check(i.hk > 0 && i.hq % i.hk == 0, "sageattention: the number of query heads (", i.hq,
             ") must be a multiple of the number of key/value heads (", i.hk, ") for GQA");
    check_internal(q_int8, "q_int8", ST::Char, {i.b, i.hq, i.q_pad, i.dp}, q_int8);
    check_internal(q_scale, "q_scale", ST::Float, {i.b, i.hq, i.q_pad / 16, 8}, q_int8);
    check_internal(k_int8, "k_int8", ST::Char, {i.b, i.hk, i.k_pad, i.dp}, q_int8);
    check_internal(k_scale, "k_scale", ST::Float, {i.b, i.hk, i.k_pad / SA_BLOCK_K, 4}, q_int8);
    return i;
  }

  // The shapes and scalars of an attention call; the quantized Q and K are set apart (set_qk).
  static sa_attn_params base_params(const QKInfo& i, int64_t q_len, int64_t kv_len, int64_t head_dim, bool causal,
                                    double sm_scale) {
    sa_attn_params p{};
    p.batch = (int)i.b;
    p.q_heads = (int)i.hq;
    p.kv_heads = (int)i.hk;
    p.q_len = (int)q_len;
    p.kv_len = (int)kv_len;
    p.head_dim = (int)head_dim;
    p.causal = causal ? 1 : 0;
    p.sm_scale = (float)sm_scale;
    return p;
  }
  static void set_qk(sa_attn_params& p, const int8_t* q_int8, const float* q_scale, const int8_t* k_int8,
                     const float* k_scale) {
    p.q_int8 = q_int8;
    p.q_scale = q_scale;
    p.k_int8 = k_int8;
    p.k_scale = k_scale;
  }

  // The fp16 P.V on p.  The scratch its kernel asks for (the gathered V on sm90) comes from torch's
  // allocator, so torch accounts for it; freed on return, it is reused in the stream's order.
  static void run_pv_fp16(sa_attn_params& p, const Tensor& like) {
    const int64_t ws_bytes = sa_attn_qk_int8_pv_fp16_workspace_bytes(&p);
    check_status(ws_bytes < 0 ? SA_ERR_INVALID_ARGUMENT : SA_OK, "attn_pv_fp16 workspace");
    OptTensor ws;  // none off sm90: nothing is allocated
    if (ws_bytes > 0) {
      ws = A::empty(like, {ws_bytes}, ST::Byte);
      p.workspace = ws->data_ptr();
      p.workspace_bytes = ws_bytes;
    }
    check_status(sa_attn_qk_int8_pv_fp16(&p, A::stream(like)), "attn_pv_fp16");
  }

  // The per-batch query arrays of the attention ops: q_seq_start (packed layout
  // only, required there: where batch b's output rows start), q_seq_len.
  static void set_query_rows(sa_attn_params& p, int64_t layout, const OptTensor& q_seq_start,
                             const OptTensor& q_seq_len, int64_t q_total, const Tensor& like) {
    if (layout == kPacked) {
      A::check(q_seq_start.has_value() && q_seq_len.has_value() && q_total > 0,
               "sageattention: the packed layout needs q_seq_start, q_seq_len and q_total > 0 (rows of the output)");
    } else {
      A::check(!q_seq_start.has_value() && q_total == 0,
               "sageattention: q_seq_start and q_total are for the packed layout (2) only");
    }
    p.q_seq_start = batch_array(q_seq_start, p.batch, "q_seq_start", like);
    p.q_seq_len = batch_array(q_seq_len, p.batch, "q_seq_len", like);
  }

  // Output [B, Hq, Nq, D] / [B, Nq, Hq, D], or packed [q_total, Hq, D]; lse [B, Hq, Nq] (Nq the longest sequence).
  static std::tuple<Tensor, Tensor> make_out(sa_attn_params& p, const Tensor& like, int64_t layout, ST out_dtype,
                                             bool return_lse, int64_t q_total) {
    A::check(is_half_or_bf16(out_dtype), "sageattention: out_dtype must be float16 or bfloat16, got ",
             A::dtype_name(out_dtype));
    Tensor out = layout == kHND   ? A::empty(like, {p.batch, p.q_heads, p.q_len, p.head_dim}, out_dtype)
                 : layout == kNHD ? A::empty(like, {p.batch, p.q_len, p.q_heads, p.head_dim}, out_dtype)
                                  : A::empty(like, {q_total, p.q_heads, p.head_dim}, out_dtype);
    p.out = out.data_ptr();
    p.out_dtype = out_dtype == ST::Half ? SA_DTYPE_F16 : SA_DTYPE_BF16;
    p.out_stride_batch = layout == kPacked ? 0 : out.stride(0);
    p.out_stride_head = out.stride(layout == kNHD ? 2 : 1);
    p.out_stride_seq = out.stride(layout == kHND ? 2 : layout == kNHD ? 1 : 0);
    Tensor lse = return_lse ? A::empty(like, {p.batch, p.q_heads, p.q_len}, ST::Float) : A::empty(like, {0}, ST::Float);
    p.lse = return_lse ? ptr<float>(lse) : nullptr;
    return {out, lse};
  }

  static std::tuple<Tensor, Tensor> attn_pv_fp16(In q_int8, In q_scale, In k_int8, In k_scale, In v, int64_t layout,
                                                 int64_t q_len, bool is_causal, double sm_scale, bool return_lse,
                                                 ST out_dtype, OptIn q_seq_start, OptIn q_seq_len, OptIn kv_seq_start,
                                                 OptIn kv_seq_len, int64_t q_total, int64_t kv_len) {
    A::check(
        &sa_attn_qk_int8_pv_fp16 != nullptr,
        "sageattention: this build does not contain the pv_fp16 kernel family (see sageattention/build_info.json)");
    check_layout(layout);
    // V as the kernel reads it: kv_seq_start / kv_seq_len place its sequences (and kv_seq_len masks the keys).
    sa_view vv = make_view(v, layout, "v", kv_seq_start, kv_seq_len, kv_len);
    A::check(v.scalar_type() == ST::Half, "sageattention: v must be float16 for the fp16 PV path, got ",
             A::dtype_name(v.scalar_type()));
    const QKInfo i = check_qk(q_int8, q_scale, k_int8, k_scale, q_len, vv.seq);
    A::check(A::same_device(v, q_int8), "sageattention: v is on ", A::device(v), " but q is on ", A::device(q_int8));
    A::check(vv.batch == i.b && vv.heads == i.hk, "sageattention: v must have batch ", i.b, " and ", i.hk,
             " heads like k, got shape ", A::sizes(v), " in layout ", layout_name(layout));
    A::check(sa_padded_head_dim(vv.dim) == i.dp, "sageattention: v head_dim ", vv.dim,
             " does not match q/k padded head_dim ", i.dp);
    typename A::Guard guard(q_int8);
    sa_attn_params p = base_params(i, q_len, vv.seq, vv.dim, is_causal, sm_scale);
    set_qk(p, ptr<int8_t>(q_int8), ptr<float>(q_scale), ptr<int8_t>(k_int8), ptr<float>(k_scale));
    p.v = vv;
    p.kv_seq_len = vv.seq_len;
    set_query_rows(p, layout, q_seq_start, q_seq_len, q_total, q_int8);
    auto res = make_out(p, q_int8, layout, out_dtype, return_lse, q_total);
    run_pv_fp16(p, q_int8);
    return res;
  }

  static std::tuple<Tensor, Tensor> attn_pv_fp8(In q_int8, In q_scale, In k_int8, In k_scale, In v_fp8, In v_scale,
                                                OptIn v_mean, int64_t layout, int64_t q_len, int64_t kv_len,
                                                int64_t head_dim, bool is_causal, double sm_scale, bool return_lse,
                                                ST out_dtype, OptIn q_seq_start, OptIn q_seq_len, OptIn kv_seq_len,
                                                int64_t q_total, bool pv_accum_f16) {
    A::check(&sa_attn_qk_int8_pv_fp8 != nullptr,
             "sageattention: this build does not contain the pv_fp8 kernel family (sm89+; see "
             "sageattention/build_info.json)");
    check_layout(layout);
    const QKInfo i = check_qk(q_int8, q_scale, k_int8, k_scale, q_len, kv_len);
    A::check(head_dim > 0 && head_dim % 8 == 0 && sa_padded_head_dim((int)head_dim) == i.dp, "sageattention: head_dim ",
             head_dim, " does not match the padded head_dim ", i.dp, " of q_int8");
    check_internal(v_fp8, "v_fp8", ST::Float8_e4m3fn, {i.b, i.hk, i.dp, i.k_pad}, q_int8);
    check_internal(v_scale, "v_scale", ST::Float, {i.b, i.hk, i.dp}, q_int8);
    if (v_mean.has_value()) check_internal(*v_mean, "v_mean", ST::Float, {i.b, i.hk, i.dp}, q_int8);
    typename A::Guard guard(q_int8);
    sa_attn_params p = base_params(i, q_len, kv_len, head_dim, is_causal, sm_scale);
    set_qk(p, ptr<int8_t>(q_int8), ptr<float>(q_scale), ptr<int8_t>(k_int8), ptr<float>(k_scale));
    p.v_fp8 = ptr<const uint8_t>(v_fp8);
    p.v_scale = ptr<float>(v_scale);
    p.v_mean = v_mean.has_value() ? ptr<float>(*v_mean) : nullptr;
    p.pv_accum_f16 = pv_accum_f16 ? 1 : 0;
    p.kv_seq_len = batch_array(kv_seq_len, p.batch, "kv_seq_len", q_int8);
    set_query_rows(p, layout, q_seq_start, q_seq_len, q_total, q_int8);
    auto res = make_out(p, q_int8, layout, out_dtype, return_lse, q_total);
    check_status(sa_attn_qk_int8_pv_fp8(&p, A::stream(q_int8)), "attn_pv_fp8");
    return res;
  }

  static std::vector<int64_t> route(int64_t cc, int64_t head_dim, int64_t pv, int64_t pv_accum_f16, int64_t families) {
    A::check(cc >= 0 && cc < 10000 && head_dim >= 0 && head_dim < (1 << 20) && pv >= -1 && pv <= 1 &&
                 pv_accum_f16 >= -1 && pv_accum_f16 <= 1 && families >= -1 && families < (1 << 16),
             "sageattention: route(cc ", cc, ", head_dim ", head_dim, ", pv ", pv, ", pv_accum_f16 ", pv_accum_f16,
             ", families ", families,
             "): cc is major * 10 + minor, pv -1 (any) / 0 (fp16) / 1 (fp8), pv_accum_f16 -1 / 0 / 1, "
             "families -1 (this build's) or a mask of sa_family bits");
    const sa_route_query q{(int)cc, (int)head_dim, (int)pv, (int)pv_accum_f16};
    sa_route_row r{};
    const sa_status s = families < 0 ? sa_route(&q, &r) : sa_route_in(&q, (unsigned)families, &r);
    A::check(s == SA_OK, "sageattention: ", sa_last_error_message());
    return {r.kernel, r.family, r.pv, r.pv_accum_f16};
  }

  // Byte offsets of attn's intermediates in its one workspace, each 256-byte aligned.
  struct Carve {
    int64_t bytes = 0;
    int64_t take(int64_t n) {
      const int64_t at = bytes;
      bytes += (n + 255) / 256 * 256;
      return at;
    }
  };

  // The whole forward of a dense batch (tensor_layout 0 or 1; key padding by
  // kv_seq_start / kv_seq_len) in one dispatch: what quant_qkv and attn_pv_fp8
  // (or attn_pv_fp16) run one after the other, with the quantized Q, K, V, their
  // scales and the statistics in one allocation instead of eight, and the
  // checks of what this op made itself left out.  The fp16 path wants v in
  // float16 (the Python layer converts).  Where the fp8 P.V's kernel quantizes
  // Q itself (sa_attn_qk_int8_pv_fp8_takes_q: sm90), Q is left out of
  // sa_quant_qkv and handed to the kernel as it is.
  static std::tuple<Tensor, Tensor> attn(In q, In k, In v, int64_t layout, bool is_causal, int64_t gran,
                                         double sm_scale, bool smooth_k, bool smooth_v, bool pv_fp8, bool return_lse,
                                         OptIn kv_seq_start, OptIn kv_seq_len, bool pv_accum_f16) {
    A::check(pv_fp8 || !pv_accum_f16, "sageattention: attn: pv_accum_f16 is for the fp8 P.V path (pv_fp8)");
    A::check(layout == kHND || layout == kNHD, "sageattention: attn takes tensor_layout 0 (HND) or 1 (NHD), got ",
             layout);
    A::check(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "sageattention: q, k, v must be 4-D");
    if (pv_fp8)
      A::check(&sa_attn_qk_int8_pv_fp8 != nullptr,
               "sageattention: this build does not contain the pv_fp8 kernel family (sm89+; see "
               "sageattention/build_info.json)");
    else
      A::check(
          &sa_attn_qk_int8_pv_fp16 != nullptr,
          "sageattention: this build does not contain the pv_fp16 kernel family (see sageattention/build_info.json)");
    sa_quant_qkv_params qp{};
    qp.q = make_view(q, layout, "q");
    qp.k = make_view(k, layout, "k", kv_seq_start, kv_seq_len, 0);
    const sa_view vv = make_view(v, layout, "v", kv_seq_start, kv_seq_len, 0);
    A::check(A::same_device(k, q) && A::same_device(v, q), "sageattention: q, k, v must be on one device, got ",
             A::device(q), ", ", A::device(k), ", ", A::device(v));
    if (pv_fp8) {
      qp.v = vv;  // quantized with K (sa_quant_qkv checks its shape against k's)
    } else {      // read as it is by the fp16 P.V
      A::check(v.scalar_type() == ST::Half, "sageattention: v must be float16 for the fp16 PV path, got ",
               A::dtype_name(v.scalar_type()));
      A::check(vv.batch == qp.k.batch && vv.heads == qp.k.heads && vv.seq == qp.k.seq && vv.dim == qp.k.dim,
               "sageattention: v must have k's shape ", A::sizes(k), ", got ", A::sizes(v), " in layout ",
               layout_name(layout));
    }
    qp.granularity = to_gran(gran);
    qp.smooth_k = smooth_k ? 1 : 0;
    qp.smooth_v = smooth_v ? 1 : 0;
    qp.v_scale_max = pv_accum_f16 ? SA_V_MAX_F16ACC : SA_V_MAX;
    const QKInfo i{qp.q.batch,
                   qp.q.heads,
                   qp.k.heads,
                   sa_round_up(qp.q.seq, SA_BLOCK_Q),
                   sa_round_up(qp.k.seq, SA_BLOCK_K),
                   sa_padded_head_dim(qp.q.dim)};
    typename A::Guard guard(q);
    sa_attn_params p = base_params(i, qp.q.seq, qp.k.seq, vv.dim, is_causal, sm_scale);
    p.kv_seq_len = qp.k.seq_len;
    auto res = make_out(p, q, layout, q.scalar_type(), return_lse, 0);
    p.pv_accum_f16 = pv_fp8 && pv_accum_f16 ? 1 : 0;
    if (pv_fp8) {  // the kernel may quantize Q itself (sm90): then sa_quant_qkv leaves Q out
      p.q = qp.q;
      p.q_granularity = qp.granularity;
      const int takes = sa_attn_qk_int8_pv_fp8_takes_q(&p);
      check_status(takes < 0 ? SA_ERR_UNSUPPORTED : SA_OK, "attn_pv_fp8");
      if (takes == 1)
        qp.q.data = nullptr;
      else
        p.q = sa_view{};
    }
    // The quantized parts and the statistics, carved from one workspace (256-byte aligned each): the
    // offsets in one walk over the parts, the pointers in a second.
    Carve w;
    std::vector<int64_t> at;
    for_each_output(qp, [&](Tensor Quant::*, auto*&, const Shape& shape, ST dtype) {
      int64_t n = dtype == ST::Float ? 4 : 1;  // int8, e4m3 or float32
      for (int64_t d : shape) n *= d;
      at.push_back(w.take(n));
    });
    const int64_t at_stats = w.take(sa_quant_qkv_stats_bytes(&qp));
    const Tensor ws = A::empty(q, {w.bytes}, ST::Byte);
    uint8_t* base = ptr<uint8_t>(ws);
    std::size_t part = 0;
    for_each_output(qp, [&](Tensor Quant::*, auto*& field, const Shape&, ST) { point(field, base + at[part++]); });
    qp.stats = base + at_stats;
    cudaStream_t stream = A::stream(q);
    check_status(sa_quant_qkv(&qp, stream), "quant_qkv");

    set_qk(p, qp.q_int8, qp.q_scale, qp.k_int8, qp.k_scale);
    if (pv_fp8) {
      p.v_fp8 = qp.v_fp8;
      p.v_scale = qp.v_scale;
      p.v_mean = smooth_v ? qp.v_mean : nullptr;
      check_status(sa_attn_qk_int8_pv_fp8(&p, stream), "attn_pv_fp8");
      return res;
    }
    p.v = vv;
    run_pv_fp16(p, q);
    return res;
  }
};

}  // namespace sa_binding
