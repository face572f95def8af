// Thin torch binding of the SageAttention C ABI: the ONLY file that includes
// torch.  No pybind11: the module is a limited-API (abi3) stub whose import
// registers the ops torch.ops.sageattention.* through TORCH_LIBRARY.
#ifndef Py_LIMITED_API  // the build passes the row's minimum Python
#define Py_LIMITED_API 0x03090000
#endif
#include <Python.h>

// Narrow torch includes: this file is the only one compiled per torch release,
// so its compile time is what a second torch costs (ATen/ATen.h and
// ATen/cuda/CUDAContext.h would add ~50 %).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "sageattn/sageattn.h"

// The attention families may be left out of a build for archs that cannot run
// them; their entry points are weak so the module still loads, and calling a
// missing one is a clear error.
#pragma weak sa_attn_qk_int8_pv_fp16
#pragma weak sa_attn_qk_int8_pv_fp16_workspace_bytes
#pragma weak sa_attn_qk_int8_pv_fp8

namespace {

constexpr int64_t kHND = 0, kNHD = 1,
                  kPacked = 2;  // kPacked: [total, heads, head_dim], sequences by seq_start / seq_len

void check_status(sa_status s, const char* what) {
  TORCH_CHECK(s == SA_OK, "sageattention: ", what, " failed (", sa_status_string(s), "): ", sa_last_error_message());
}

const char* layout_name(int64_t layout) {
  return layout == kHND   ? "HND [batch, heads, seq, head_dim]"
         : layout == kNHD ? "NHD [batch, seq, heads, head_dim]"
                          : "packed [total, heads, head_dim]";
}

void check_layout(int64_t layout) {
  TORCH_CHECK(layout == kHND || layout == kNHD || layout == kPacked,
              "sageattention: tensor_layout must be 0 (HND), 1 (NHD) or 2 (packed), got ", layout);
}

// A per-batch int32 array (sequence starts or lengths): 1-D, contiguous, on `like`'s device; NULL when absent.
const int32_t* batch_array(const std::optional<at::Tensor>& t, int64_t batch, const char* name,
                           const at::Tensor& like) {
  if (!t.has_value()) return nullptr;
  TORCH_CHECK(t->device() == like.device(), "sageattention: ", name, " is on ", t->device(), " but the data is on ",
              like.device());
  TORCH_CHECK(t->scalar_type() == at::kInt && t->dim() == 1 && t->numel() == batch && t->is_contiguous(),
              "sageattention: ", name, " must be a contiguous 1-D int32 tensor of ", batch,
              " entries (one per batch), got ", t->scalar_type(), " ", t->sizes());
  return t->data_ptr<int32_t>();
}

// [B, H, N, D] view of a user tensor in the given layout.  Packed (layout 2):
// t is [total, H, D]; sequence b is rows seq_start[b] .. + seq_len[b] (both
// required), max_seq the longest.  Dense layouts take optional seq_start
// (absolute rows of the seq axis: stride_batch is then unused) and seq_len.
sa_view make_view(const at::Tensor& t, int64_t layout, const char* name,
                  const std::optional<at::Tensor>& seq_start = {}, const std::optional<at::Tensor>& seq_len = {},
                  int64_t max_seq = 0) {
  TORCH_CHECK(t.defined(), "sageattention: ", name, " is undefined");
  TORCH_CHECK(t.is_cuda(), "sageattention: ", name, " must be a CUDA tensor, got device ", t.device());
  const int64_t rank = layout == kPacked ? 3 : 4;
  TORCH_CHECK(t.dim() == rank, "sageattention: ", name, " must be ", rank, "-D in layout ", layout_name(layout),
              ", got ", t.dim(), "-D with shape ", t.sizes());
  TORCH_CHECK(t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16, "sageattention: ", name,
              " must be float16 or bfloat16, got ", t.scalar_type());
  TORCH_CHECK(t.stride(rank - 1) == 1, "sageattention: ", name,
              " must be contiguous in its last (head_dim) dimension, got stride ", t.stride(rank - 1));
  const int64_t d = t.size(rank - 1);
  TORCH_CHECK(d > 0 && d <= 128 && d % 8 == 0, "sageattention: ", name,
              " head_dim must be a multiple of 8 and at most 128 here (pad in Python), got ", d);
  bool strides_ok = reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
  for (int64_t i = 0; i + 1 < rank; ++i) strides_ok = strides_ok && t.stride(i) % 8 == 0;
  TORCH_CHECK(strides_ok, "sageattention: ", name,
              " must be 16-byte aligned with strides that are multiples of 8 elements, got strides ", t.strides());
  sa_view v{};
  v.data = t.data_ptr();
  v.dtype = t.scalar_type() == at::kHalf ? SA_DTYPE_F16 : SA_DTYPE_BF16;
  v.dim = (int)d;
  if (layout == kPacked) {
    TORCH_CHECK(seq_start.has_value() && seq_len.has_value() && max_seq > 0, "sageattention: ", name,
                " in the packed layout needs seq_start, seq_len (int32, one per sequence) and max_seq > 0");
    TORCH_CHECK(t.size(0) > 0 && t.size(1) > 0, "sageattention: ", name, " has an empty dimension: ", t.sizes());
    TORCH_CHECK(max_seq < (1LL << 31) && t.size(1) <= 65535 && seq_len->numel() <= 65535 && seq_len->numel() > 0,
                "sageattention: ", name, " is too large or has no sequence: ", t.sizes(), ", ", seq_len->numel(),
                " sequences, max_seq ", max_seq);
    v.batch = (int)seq_len->numel();
    v.heads = (int)t.size(1);
    v.seq = (int)max_seq;
    v.stride_batch = 0;
    v.stride_head = t.stride(1);
    v.stride_seq = t.stride(0);
  } else {
    const int hd = layout == kHND ? 1 : 2, nd = layout == kHND ? 2 : 1;
    TORCH_CHECK(t.size(0) > 0 && t.size(hd) > 0 && t.size(nd) > 0, "sageattention: ", name,
                " has an empty dimension: ", t.sizes());
    TORCH_CHECK(t.size(nd) < (1LL << 31) && t.size(hd) <= 65535 && t.size(0) <= 65535, "sageattention: ", name,
                " is too large: ", t.sizes());
    TORCH_CHECK(max_seq == 0 || max_seq == t.size(nd), "sageattention: max_seq (", max_seq, ") of ", name,
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

sa_granularity to_gran(int64_t g) {
  TORCH_CHECK(g == SA_GRAN_PER_BLOCK || g == SA_GRAN_PER_WARP || g == SA_GRAN_PER_THREAD,
              "sageattention: granularity must be 0 (per_block), 1 (per_warp) or 2 (per_thread), got ", g);
  return static_cast<sa_granularity>(g);
}

void check_internal(const at::Tensor& t, const char* name, at::ScalarType dt, at::IntArrayRef shape,
                    const at::Device& dev) {
  TORCH_CHECK(t.defined() && t.is_cuda(), "sageattention: ", name, " must be a CUDA tensor");
  TORCH_CHECK(t.device() == dev, "sageattention: ", name, " is on ", t.device(), " but q is on ", dev);
  TORCH_CHECK(t.scalar_type() == dt, "sageattention: ", name, " must have dtype ", dt, ", got ", t.scalar_type());
  TORCH_CHECK(t.sizes() == shape, "sageattention: ", name, " must have shape ", shape, ", got ", t.sizes());
  TORCH_CHECK(t.is_contiguous(), "sageattention: ", name, " must be contiguous");
}

using OptTensor = std::optional<at::Tensor>;

std::tuple<at::Tensor, at::Tensor> quant_q(const at::Tensor& q, int64_t layout, int64_t gran,
                                           const OptTensor& seq_start, const OptTensor& seq_len, int64_t max_seq) {
  check_layout(layout);
  sa_view v = make_view(q, layout, "q", seq_start, seq_len, max_seq);
  c10::cuda::CUDAGuard guard(q.device());
  const int64_t dp = sa_padded_head_dim(v.dim), n_pad = sa_round_up(v.seq, SA_BLOCK_Q);
  auto q_int8 = at::empty({v.batch, v.heads, n_pad, dp}, q.options().dtype(at::kChar));
  auto q_scale = at::empty({v.batch, v.heads, n_pad / 16, 8}, q.options().dtype(at::kFloat));
  sa_quant_q_params p{v, to_gran(gran), q_int8.data_ptr<int8_t>(), q_scale.data_ptr<float>()};
  check_status(sa_quant_q(&p, c10::cuda::getCurrentCUDAStream()), "quant_q");
  return {q_int8, q_scale};
}

std::tuple<at::Tensor, at::Tensor> quant_k(const at::Tensor& k, int64_t layout, int64_t gran, bool smooth_k,
                                           const OptTensor& seq_start, const OptTensor& seq_len, int64_t max_seq) {
  check_layout(layout);
  sa_view v = make_view(k, layout, "k", seq_start, seq_len, max_seq);
  c10::cuda::CUDAGuard guard(k.device());
  auto stream = c10::cuda::getCurrentCUDAStream();
  const int64_t dp = sa_padded_head_dim(v.dim), n_pad = sa_round_up(v.seq, SA_BLOCK_K);
  at::Tensor k_sum;
  if (smooth_k) {
    k_sum = at::empty({v.batch, v.heads, v.dim}, k.options().dtype(at::kFloat));
    sa_channel_stats_params sp{v, k_sum.data_ptr<float>(), nullptr, nullptr};
    check_status(sa_channel_stats(&sp, stream), "channel_stats(k)");
  }
  auto k_int8 = at::empty({v.batch, v.heads, n_pad, dp}, k.options().dtype(at::kChar));
  auto k_scale = at::empty({v.batch, v.heads, n_pad / SA_BLOCK_K, 4}, k.options().dtype(at::kFloat));
  sa_quant_k_params p{v, to_gran(gran), smooth_k ? k_sum.data_ptr<float>() : nullptr, k_int8.data_ptr<int8_t>(),
                      k_scale.data_ptr<float>()};
  check_status(sa_quant_k(&p, stream), "quant_k");
  return {k_int8, k_scale};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> quant_v_fp8(const at::Tensor& v_in, int64_t layout, bool smooth_v,
                                                           const OptTensor& seq_start, const OptTensor& seq_len,
                                                           int64_t max_seq) {
  check_layout(layout);
  sa_view v = make_view(v_in, layout, "v", seq_start, seq_len, max_seq);
  c10::cuda::CUDAGuard guard(v_in.device());
  auto stream = c10::cuda::getCurrentCUDAStream();
  const int64_t dp = sa_padded_head_dim(v.dim), n_pad = sa_round_up(v.seq, SA_BLOCK_K);
  auto fopt = v_in.options().dtype(at::kFloat);
  auto st = at::empty({3, v.batch, v.heads, v.dim}, fopt);
  sa_channel_stats_params sp{v, st[0].data_ptr<float>(), st[1].data_ptr<float>(), st[2].data_ptr<float>()};
  check_status(sa_channel_stats(&sp, stream), "channel_stats(v)");
  auto v_fp8 = at::empty({v.batch, v.heads, dp, n_pad}, v_in.options().dtype(at::kFloat8_e4m3fn));
  auto v_scale = at::empty({v.batch, v.heads, dp}, fopt);
  auto v_mean = at::empty({v.batch, v.heads, dp}, fopt);
  sa_quant_v_fp8_params p{v,
                          st[0].data_ptr<float>(),
                          st[1].data_ptr<float>(),
                          st[2].data_ptr<float>(),
                          smooth_v ? 1 : 0,
                          reinterpret_cast<uint8_t*>(v_fp8.data_ptr()),
                          v_scale.data_ptr<float>(),
                          v_mean.data_ptr<float>()};
  check_status(sa_quant_v_fp8(&p, stream), "quant_v_fp8");
  return {v_fp8, v_scale, v_mean};
}

struct QKInfo {
  int64_t b, hq, hk, q_pad, k_pad, dp;
};

QKInfo check_qk(const at::Tensor& q_int8, const at::Tensor& q_scale, const at::Tensor& k_int8,
                const at::Tensor& k_scale, int64_t q_len, int64_t kv_len) {
  TORCH_CHECK(q_int8.defined() && q_int8.is_cuda() && q_int8.dim() == 4 && q_int8.scalar_type() == at::kChar,
              "sageattention: q_int8 must be a 4-D int8 CUDA tensor [B, Hq, Nq_pad, Dp] from quant_q");
  TORCH_CHECK(k_int8.defined() && k_int8.is_cuda() && k_int8.dim() == 4 && k_int8.scalar_type() == at::kChar,
              "sageattention: k_int8 must be a 4-D int8 CUDA tensor [B, Hk, Nk_pad, Dp] from quant_k");
  QKInfo i{q_int8.size(0), q_int8.size(1), k_int8.size(1), q_int8.size(2), k_int8.size(2), q_int8.size(3)};
  const auto dev = q_int8.device();
  TORCH_CHECK(i.dp == 64 || i.dp == 128, "sageattention: padded head_dim of q_int8 must be 64 or 128, got ", i.dp);
  TORCH_CHECK(q_len > 0 && sa_round_up(q_len, SA_BLOCK_Q) == i.q_pad, "sageattention: q_len ", q_len,
              " does not match q_int8's padded length ", i.q_pad);
  TORCH_CHECK(kv_len > 0 && sa_round_up(kv_len, SA_BLOCK_K) == i.k_pad, "sageattention: kv_len ", kv_len,
              " does not match k_int8's padded length ", i.k_pad);
  TORCH_CHECK(i.hk > 0 && i.hq % i.hk == 0, "sageattention: the number of query heads (", i.hq,
              ") must be a multiple of the number of key/value heads (", i.hk, ") for GQA");
  check_internal(q_int8, "q_int8", at::kChar, {i.b, i.hq, i.q_pad, i.dp}, dev);
  check_internal(q_scale, "q_scale", at::kFloat, {i.b, i.hq, i.q_pad / 16, 8}, dev);
  check_internal(k_int8, "k_int8", at::kChar, {i.b, i.hk, i.k_pad, i.dp}, dev);
  check_internal(k_scale, "k_scale", at::kFloat, {i.b, i.hk, i.k_pad / SA_BLOCK_K, 4}, dev);
  return i;
}

sa_attn_params base_params(const QKInfo& i, const at::Tensor& q_int8, const at::Tensor& q_scale,
                           const at::Tensor& k_int8, const at::Tensor& k_scale, int64_t q_len, int64_t kv_len,
                           int64_t head_dim, bool causal, double sm_scale) {
  sa_attn_params p{};
  p.q_int8 = q_int8.data_ptr<int8_t>();
  p.q_scale = q_scale.data_ptr<float>();
  p.k_int8 = k_int8.data_ptr<int8_t>();
  p.k_scale = k_scale.data_ptr<float>();
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

// The per-batch query arrays of the attention ops: q_seq_start (packed layout
// only, required there: where batch b's output rows start), q_seq_len.
void set_query_rows(sa_attn_params& p, int64_t layout, const OptTensor& q_seq_start, const OptTensor& q_seq_len,
                    int64_t q_total, const at::Tensor& like) {
  if (layout == kPacked) {
    TORCH_CHECK(q_seq_start.has_value() && q_seq_len.has_value() && q_total > 0,
                "sageattention: the packed layout needs q_seq_start, q_seq_len and q_total > 0 (rows of the output)");
  } else {
    TORCH_CHECK(!q_seq_start.has_value() && q_total == 0,
                "sageattention: q_seq_start and q_total are for the packed layout (2) only");
  }
  p.q_seq_start = batch_array(q_seq_start, p.batch, "q_seq_start", like);
  p.q_seq_len = batch_array(q_seq_len, p.batch, "q_seq_len", like);
}

// Output [B, Hq, Nq, D] / [B, Nq, Hq, D], or packed [q_total, Hq, D]; lse [B, Hq, Nq] (Nq the longest sequence).
std::tuple<at::Tensor, at::Tensor> make_out(sa_attn_params& p, const at::Tensor& like, int64_t layout,
                                            at::ScalarType out_dtype, bool return_lse, int64_t q_total) {
  TORCH_CHECK(out_dtype == at::kHalf || out_dtype == at::kBFloat16,
              "sageattention: out_dtype must be float16 or bfloat16, got ", out_dtype);
  auto opt = like.options().dtype(out_dtype);
  at::Tensor out = layout == kHND   ? at::empty({p.batch, p.q_heads, p.q_len, p.head_dim}, opt)
                   : layout == kNHD ? at::empty({p.batch, p.q_len, p.q_heads, p.head_dim}, opt)
                                    : at::empty({q_total, p.q_heads, p.head_dim}, opt);
  p.out = out.data_ptr();
  p.out_dtype = out_dtype == at::kHalf ? SA_DTYPE_F16 : SA_DTYPE_BF16;
  p.out_stride_batch = layout == kPacked ? 0 : out.stride(0);
  p.out_stride_head = out.stride(layout == kNHD ? 2 : 1);
  p.out_stride_seq = out.stride(layout == kHND ? 2 : layout == kNHD ? 1 : 0);
  at::Tensor lse = return_lse ? at::empty({p.batch, p.q_heads, p.q_len}, like.options().dtype(at::kFloat))
                              : at::empty({0}, like.options().dtype(at::kFloat));
  p.lse = return_lse ? lse.data_ptr<float>() : nullptr;
  return {out, lse};
}

std::tuple<at::Tensor, at::Tensor> attn_pv_fp16(const at::Tensor& q_int8, const at::Tensor& q_scale,
                                                const at::Tensor& k_int8, const at::Tensor& k_scale,
                                                const at::Tensor& v, int64_t layout, int64_t q_len, bool is_causal,
                                                double sm_scale, bool return_lse, at::ScalarType out_dtype,
                                                const OptTensor& q_seq_start, const OptTensor& q_seq_len,
                                                const OptTensor& kv_seq_start, const OptTensor& kv_seq_len,
                                                int64_t q_total, int64_t kv_len) {
  TORCH_CHECK(
      &sa_attn_qk_int8_pv_fp16 != nullptr,
      "sageattention: this build does not contain the pv_fp16 kernel family (see sageattention/build_info.json)");
  check_layout(layout);
  // V as the kernel reads it: kv_seq_start / kv_seq_len place its sequences (and kv_seq_len masks the keys).
  sa_view vv = make_view(v, layout, "v", kv_seq_start, kv_seq_len, kv_len);
  TORCH_CHECK(v.scalar_type() == at::kHalf, "sageattention: v must be float16 for the fp16 PV path, got ",
              v.scalar_type());
  const QKInfo i = check_qk(q_int8, q_scale, k_int8, k_scale, q_len, vv.seq);
  TORCH_CHECK(v.device() == q_int8.device(), "sageattention: v is on ", v.device(), " but q is on ", q_int8.device());
  TORCH_CHECK(vv.batch == i.b && vv.heads == i.hk, "sageattention: v must have batch ", i.b, " and ", i.hk,
              " heads like k, got shape ", v.sizes(), " in layout ", layout_name(layout));
  TORCH_CHECK(sa_padded_head_dim(vv.dim) == i.dp, "sageattention: v head_dim ", vv.dim,
              " does not match q/k padded head_dim ", i.dp);
  c10::cuda::CUDAGuard guard(q_int8.device());
  sa_attn_params p = base_params(i, q_int8, q_scale, k_int8, k_scale, q_len, vv.seq, vv.dim, is_causal, sm_scale);
  p.v = vv;
  p.kv_seq_len = vv.seq_len;
  set_query_rows(p, layout, q_seq_start, q_seq_len, q_total, q_int8);
  auto res = make_out(p, q_int8, layout, out_dtype, return_lse, q_total);
  // Scratch the kernel needs (V^T on sm90) comes from torch's allocator, so torch
  // accounts for it; freed here, it is reused in the current stream's order.
  const int64_t ws_bytes = sa_attn_qk_int8_pv_fp16_workspace_bytes(&p);
  check_status(ws_bytes < 0 ? SA_ERR_INVALID_ARGUMENT : SA_OK, "attn_pv_fp16 workspace");
  at::Tensor ws;  // undefined off sm90: nothing is allocated
  if (ws_bytes > 0) {
    ws = at::empty({ws_bytes}, q_int8.options().dtype(at::kByte));
    p.workspace = ws.data_ptr();
    p.workspace_bytes = ws_bytes;
  }
  check_status(sa_attn_qk_int8_pv_fp16(&p, c10::cuda::getCurrentCUDAStream()), "attn_pv_fp16");
  return res;
}

std::tuple<at::Tensor, at::Tensor> attn_pv_fp8(const at::Tensor& q_int8, const at::Tensor& q_scale,
                                               const at::Tensor& k_int8, const at::Tensor& k_scale,
                                               const at::Tensor& v_fp8, const at::Tensor& v_scale,
                                               const std::optional<at::Tensor>& v_mean, int64_t layout, int64_t q_len,
                                               int64_t kv_len, int64_t head_dim, bool is_causal, double sm_scale,
                                               bool return_lse, at::ScalarType out_dtype, const OptTensor& q_seq_start,
                                               const OptTensor& q_seq_len, const OptTensor& kv_seq_len,
                                               int64_t q_total) {
  TORCH_CHECK(
      &sa_attn_qk_int8_pv_fp8 != nullptr,
      "sageattention: this build does not contain the pv_fp8 kernel family (sm89+; see sageattention/build_info.json)");
  check_layout(layout);
  const QKInfo i = check_qk(q_int8, q_scale, k_int8, k_scale, q_len, kv_len);
  TORCH_CHECK(head_dim > 0 && head_dim % 8 == 0 && sa_padded_head_dim((int)head_dim) == i.dp,
              "sageattention: head_dim ", head_dim, " does not match the padded head_dim ", i.dp, " of q_int8");
  const auto dev = q_int8.device();
  check_internal(v_fp8, "v_fp8", at::kFloat8_e4m3fn, {i.b, i.hk, i.dp, i.k_pad}, dev);
  check_internal(v_scale, "v_scale", at::kFloat, {i.b, i.hk, i.dp}, dev);
  if (v_mean.has_value()) check_internal(*v_mean, "v_mean", at::kFloat, {i.b, i.hk, i.dp}, dev);
  c10::cuda::CUDAGuard guard(dev);
  sa_attn_params p = base_params(i, q_int8, q_scale, k_int8, k_scale, q_len, kv_len, head_dim, is_causal, sm_scale);
  p.v_fp8 = reinterpret_cast<const uint8_t*>(v_fp8.data_ptr());
  p.v_scale = v_scale.data_ptr<float>();
  p.v_mean = v_mean.has_value() ? v_mean->data_ptr<float>() : nullptr;
  p.kv_seq_len = batch_array(kv_seq_len, p.batch, "kv_seq_len", q_int8);
  set_query_rows(p, layout, q_seq_start, q_seq_len, q_total, q_int8);
  auto res = make_out(p, q_int8, layout, out_dtype, return_lse, q_total);
  check_status(sa_attn_qk_int8_pv_fp8(&p, c10::cuda::getCurrentCUDAStream()), "attn_pv_fp8");
  return res;
}

// The whole forward of a dense batch (tensor_layout 0 or 1; key padding by
// kv_seq_start / kv_seq_len): the ops above, composed here so a call costs one
// dispatch.  The fp16 path wants v in float16 (the Python layer converts).
std::tuple<at::Tensor, at::Tensor> attn(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t layout,
                                        bool is_causal, int64_t gran, double sm_scale, bool smooth_k, bool smooth_v,
                                        bool pv_fp8, bool return_lse, const OptTensor& kv_seq_start,
                                        const OptTensor& kv_seq_len) {
  TORCH_CHECK(layout == 0 || layout == 1, "sageattention: attn takes tensor_layout 0 (HND) or 1 (NHD), got ", layout);
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "sageattention: q, k, v must be 4-D");
  const int nd = layout == 0 ? 2 : 1;
  const int64_t q_len = q.size(nd), kv_len = k.size(nd);
  // Q, K and (fp8 path) V quantized by one C call: the quant_* ops' outputs in two launches.
  check_layout(layout);
  const sa_view qv = make_view(q, layout, "q", {}, {}, 0);
  const sa_view kv = make_view(k, layout, "k", kv_seq_start, kv_seq_len, 0);
  const sa_view vv = pv_fp8 ? make_view(v, layout, "v", kv_seq_start, kv_seq_len, 0) : sa_view{};
  c10::cuda::CUDAGuard guard(q.device());
  const int64_t dp = sa_padded_head_dim(qv.dim), q_pad = sa_round_up(qv.seq, SA_BLOCK_Q);
  const int64_t k_pad = sa_round_up(kv.seq, SA_BLOCK_K);
  const auto i8 = q.options().dtype(at::kChar), f32 = q.options().dtype(at::kFloat);
  auto q_int8 = at::empty({qv.batch, qv.heads, q_pad, dp}, i8);
  auto q_scale = at::empty({qv.batch, qv.heads, q_pad / 16, 8}, f32);
  auto k_int8 = at::empty({kv.batch, kv.heads, k_pad, dp}, i8);
  auto k_scale = at::empty({kv.batch, kv.heads, k_pad / SA_BLOCK_K, 4}, f32);
  at::Tensor v_fp8, v_scale, v_mean;
  if (pv_fp8) {
    v_fp8 = at::empty({kv.batch, kv.heads, dp, k_pad}, q.options().dtype(at::kFloat8_e4m3fn));
    v_scale = at::empty({kv.batch, kv.heads, dp}, f32);
    v_mean = at::empty({kv.batch, kv.heads, dp}, f32);
  }
  sa_quant_qkv_params qp{qv,
                         kv,
                         vv,
                         to_gran(gran),
                         smooth_k ? 1 : 0,
                         smooth_v ? 1 : 0,
                         q_int8.data_ptr<int8_t>(),
                         q_scale.data_ptr<float>(),
                         k_int8.data_ptr<int8_t>(),
                         k_scale.data_ptr<float>(),
                         pv_fp8 ? reinterpret_cast<uint8_t*>(v_fp8.data_ptr()) : nullptr,
                         pv_fp8 ? v_scale.data_ptr<float>() : nullptr,
                         pv_fp8 ? v_mean.data_ptr<float>() : nullptr,
                         nullptr};
  auto stats = at::empty({std::max<int64_t>(sa_quant_qkv_stats_bytes(&qp) / 4, 1)}, f32);
  qp.stats = stats.data_ptr<float>();
  check_status(sa_quant_qkv(&qp, c10::cuda::getCurrentCUDAStream()), "quant_qkv");
  if (pv_fp8)
    return attn_pv_fp8(q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, smooth_v ? OptTensor(v_mean) : OptTensor(),
                       layout, q_len, kv_len, v.size(3), is_causal, sm_scale, return_lse, q.scalar_type(), {}, {},
                       kv_seq_len, 0);
  return attn_pv_fp16(q_int8, q_scale, k_int8, k_scale, v, layout, q_len, is_causal, sm_scale, return_lse,
                      q.scalar_type(), {}, {}, kv_seq_start, kv_seq_len, 0, 0);
}

}  // namespace

TORCH_LIBRARY(sageattention, m) {
  // tensor_layout: 0 HND, 1 NHD, 2 packed [total, heads, head_dim].  The trailing
  // Tensor? arguments are int32 [batch] sequence starts / lengths (sageattn.h):
  // varlen batches and key-padding masks; their defaults keep dense calls short.
  m.def(
      "quant_q(Tensor q, int tensor_layout, int granularity, Tensor? seq_start=None, Tensor? seq_len=None, "
      "int max_seq=0) -> (Tensor q_int8, Tensor q_scale)");
  m.def(
      "quant_k(Tensor k, int tensor_layout, int granularity, bool smooth_k, Tensor? seq_start=None, "
      "Tensor? seq_len=None, int max_seq=0) -> (Tensor k_int8, Tensor k_scale)");
  m.def(
      "quant_v_fp8(Tensor v, int tensor_layout, bool smooth_v, Tensor? seq_start=None, Tensor? seq_len=None, "
      "int max_seq=0) -> (Tensor v_fp8, Tensor v_scale, Tensor v_mean)");
  m.def(
      "attn_pv_fp16(Tensor q_int8, Tensor q_scale, Tensor k_int8, Tensor k_scale, Tensor v, int tensor_layout, "
      "int q_len, bool is_causal, float sm_scale, bool return_lse, ScalarType out_dtype, Tensor? q_seq_start=None, "
      "Tensor? q_seq_len=None, Tensor? kv_seq_start=None, Tensor? kv_seq_len=None, int q_total=0, int kv_len=0) "
      "-> (Tensor out, Tensor lse)");
  m.def(
      "attn_pv_fp8(Tensor q_int8, Tensor q_scale, Tensor k_int8, Tensor k_scale, Tensor v_fp8, Tensor v_scale, "
      "Tensor? v_mean, int tensor_layout, int q_len, int kv_len, int head_dim, bool is_causal, float sm_scale, "
      "bool return_lse, ScalarType out_dtype, Tensor? q_seq_start=None, Tensor? q_seq_len=None, "
      "Tensor? kv_seq_len=None, int q_total=0) -> (Tensor out, Tensor lse)");
  // The whole forward in one call (what sageattn runs): quantization and
  // attention without a trip through Python between the kernels.
  m.def(
      "attn(Tensor q, Tensor k, Tensor v, int tensor_layout, bool is_causal, int granularity, float sm_scale, "
      "bool smooth_k, bool smooth_v, bool pv_fp8, bool return_lse, Tensor? kv_seq_start=None, "
      "Tensor? kv_seq_len=None) -> (Tensor out, Tensor lse)");
}

TORCH_LIBRARY_IMPL(sageattention, CUDA, m) {
  m.impl("quant_q", &quant_q);
  m.impl("quant_k", &quant_k);
  m.impl("quant_v_fp8", &quant_v_fp8);
  m.impl("attn_pv_fp16", &attn_pv_fp16);
  m.impl("attn_pv_fp8", &attn_pv_fp8);
  m.impl("attn", &attn);
}

// CPU tensors reach the same checks, which reject them naming the argument.
TORCH_LIBRARY_IMPL(sageattention, CPU, m) {
  m.impl("quant_q", &quant_q);
  m.impl("quant_k", &quant_k);
  m.impl("quant_v_fp8", &quant_v_fp8);
  m.impl("attn_pv_fp16", &attn_pv_fp16);
  m.impl("attn_pv_fp8", &attn_pv_fp8);
  m.impl("attn", &attn);
}

// Minimal limited-API module: importing sageattention._C loads this library,
// whose static initialisers above register the ops.
static PyModuleDef sa_module = {PyModuleDef_HEAD_INIT,
                                "_C",
                                "SageAttention CUDA kernels; the ops live in torch.ops.sageattention",
                                -1,
                                nullptr,
                                nullptr,
                                nullptr,
                                nullptr,
                                nullptr};

PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&sa_module); }
