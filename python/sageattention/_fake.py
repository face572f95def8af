"""Fake (meta) implementations of torch.ops.sageattention.*: shapes and dtypes
only, so torch.compile can trace through the ops without graph breaks.

tensor_layout 0 (HND), 1 (NHD) or 2 (packed [total, heads, head_dim], whose
batch is the length of seq_len and whose longest sequence is max_seq)."""
import torch

from ._tensors import padded_head_dim as _padded_head_dim

_BLOCK_Q = 128
_BLOCK_K = 64
_PACKED = 2


def _round_up(n, t):
    return (n + t - 1) // t * t


def _bhnd(x, layout, seq_len=None, max_seq=0):
    """(batch, heads, seq, head_dim) of a view, as the binding's make_view sees it."""
    if layout == _PACKED:
        torch._check(seq_len is not None and max_seq > 0, lambda: "the packed layout needs seq_len and max_seq")
        return seq_len.shape[0], x.shape[1], max_seq, x.shape[2]
    if layout == 0:
        return x.shape[0], x.shape[1], x.shape[2], x.shape[3]
    return x.shape[0], x.shape[2], x.shape[1], x.shape[3]


@torch.library.register_fake("sageattention::quant_q")
def _quant_q(q, tensor_layout, granularity, seq_start=None, seq_len=None, max_seq=0):
    b, h, n, d = _bhnd(q, tensor_layout, seq_len, max_seq)
    n_pad = _round_up(n, _BLOCK_Q)
    return (q.new_empty((b, h, n_pad, _padded_head_dim(d)), dtype=torch.int8),
            q.new_empty((b, h, n_pad // 16, 8), dtype=torch.float32))


@torch.library.register_fake("sageattention::quant_k")
def _quant_k(k, tensor_layout, granularity, smooth_k, seq_start=None, seq_len=None, max_seq=0):
    b, h, n, d = _bhnd(k, tensor_layout, seq_len, max_seq)
    n_pad = _round_up(n, _BLOCK_K)
    return (k.new_empty((b, h, n_pad, _padded_head_dim(d)), dtype=torch.int8),
            k.new_empty((b, h, n_pad // _BLOCK_K, 4), dtype=torch.float32))


@torch.library.register_fake("sageattention::quant_v_fp8")
def _quant_v_fp8(v, tensor_layout, smooth_v, seq_start=None, seq_len=None, max_seq=0, scale_max=448.0):
    b, h, n, d = _bhnd(v, tensor_layout, seq_len, max_seq)
    dp = _padded_head_dim(d)
    return (v.new_empty((b, h, dp, _round_up(n, _BLOCK_K)), dtype=torch.float8_e4m3fn),
            v.new_empty((b, h, dp), dtype=torch.float32),
            v.new_empty((b, h, dp), dtype=torch.float32))


@torch.library.register_fake("sageattention::quant_qkv")
def _quant_qkv(q, k, v, tensor_layout, granularity, smooth_k, smooth_v, q_seq_start=None, q_seq_len=None, max_q=0,
               kv_seq_start=None, kv_seq_len=None, max_kv=0, scale_max=448.0):
    q_int8, q_scale = _quant_q(q, tensor_layout, granularity, q_seq_start, q_seq_len, max_q)
    k_int8, k_scale = _quant_k(k, tensor_layout, granularity, smooth_k, kv_seq_start, kv_seq_len, max_kv)
    if v is not None:
        v_fp8, v_scale, v_mean = _quant_v_fp8(v, tensor_layout, smooth_v, kv_seq_start, kv_seq_len, max_kv, scale_max)
    else:
        v_fp8 = q.new_empty((0,), dtype=torch.float8_e4m3fn)
        v_scale, v_mean = (q.new_empty((0,), dtype=torch.float32) for _ in range(2))
    return q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean


def _out(q_int8, tensor_layout, q_len, head_dim, return_lse, out_dtype, q_total):
    b, hq = q_int8.shape[0], q_int8.shape[1]
    if tensor_layout == _PACKED:
        torch._check(q_total > 0, lambda: "the packed layout needs q_total")
        shape = (q_total, hq, head_dim)
    else:
        shape = (b, hq, q_len, head_dim) if tensor_layout == 0 else (b, q_len, hq, head_dim)
    o = q_int8.new_empty(shape, dtype=out_dtype)
    lse = q_int8.new_empty((b, hq, q_len) if return_lse else (0,), dtype=torch.float32)
    return o, lse


@torch.library.register_fake("sageattention::attn_pv_fp16")
def _attn_pv_fp16(q_int8, q_scale, k_int8, k_scale, v, tensor_layout, q_len, is_causal, sm_scale, return_lse,
                  out_dtype, q_seq_start=None, q_seq_len=None, kv_seq_start=None, kv_seq_len=None, q_total=0,
                  kv_len=0):
    torch._check(q_int8.shape[1] % k_int8.shape[1] == 0)
    return _out(q_int8, tensor_layout, q_len, v.shape[-1], return_lse, out_dtype, q_total)


@torch.library.register_fake("sageattention::attn_pv_fp8")
def _attn_pv_fp8(q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean, tensor_layout, q_len, kv_len, head_dim,
                 is_causal, sm_scale, return_lse, out_dtype, q_seq_start=None, q_seq_len=None, kv_seq_len=None,
                 q_total=0, pv_accum_f16=False):
    torch._check(q_int8.shape[1] % k_int8.shape[1] == 0)
    return _out(q_int8, tensor_layout, q_len, head_dim, return_lse, out_dtype, q_total)


@torch.library.register_fake("sageattention::attn")
def _attn(q, k, v, tensor_layout, is_causal, granularity, sm_scale, smooth_k, smooth_v, pv_fp8, return_lse,
          kv_seq_start=None, kv_seq_len=None, pv_accum_f16=False):
    torch._check(tensor_layout in (0, 1), lambda: "attn takes tensor_layout 0 (HND) or 1 (NHD)")
    b, hq, nq, _ = _bhnd(q, tensor_layout)
    _, hk, _, _ = _bhnd(k, tensor_layout)
    torch._check(hq % hk == 0)
    o = q.new_empty(q.shape[:3] + (v.shape[3],), dtype=q.dtype)
    lse = q.new_empty((b, hq, nq) if return_lse else (0,), dtype=torch.float32)
    return o, lse
