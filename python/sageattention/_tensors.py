"""Tensor preparation around the kernels: checks, the dtype the kernels see,
empty inputs, head-dim padding and alignment, a mask's key ranges, and the LSE
correction for K smoothing.

fp32 inputs run as bfloat16: bf16 keeps fp32's 8-bit exponent, so every finite
fp32 value stays finite (fp16 would overflow above 65504), and its 8-bit
significand is finer than the INT8 (Q, K) and FP8/FP16 (P, V) quantization the
kernels apply anyway: an fp32 call is exactly as accurate as the same call in
bf16.  The FP16 P.V path reads V as fp16: there an fp32 call's V is scaled by a
power of two into fp16's range first (exact) and the output scaled back.  The
result comes back as fp32."""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F

from . import _args, _routes
from .masks import KeyPadding, MaskError, key_padding


DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def kernel_dtype(dtype):
    """The dtype the kernels run for inputs of ``dtype`` (fp32 -> bf16: see the module's docstring)."""
    return torch.bfloat16 if dtype == torch.float32 else dtype


def into_fp16_range(v):
    """(v / s, s): v scaled by a power of two s >= 1 (exact) so that |v| <= 32768 fits fp16, for the FP16 P.V
    path; s is a 0-dim fp32 tensor on v's device (no host synchronisation)."""
    amax = v.detach().abs().amax().float()
    s = torch.exp2(torch.ceil(torch.log2(amax / 32768.0))).clamp_min(1.0)
    return (v / s).to(v.dtype), s


def seq_dims(tensor_layout):
    """(heads dim, seq dim) of a 4-D tensor in ``tensor_layout``."""
    return (1, 2) if tensor_layout == "HND" else (2, 1)


def check_tensors(names, tensors, rank, shape_text):
    """shape_text: the expected shape in words, or a function giving it (made only for the error)."""
    for name, t in zip(names, tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"sageattention: {name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != rank:
            text = shape_text() if callable(shape_text) else shape_text
            raise ValueError(f"sageattention: {name} must be {rank}-D ({text}), got shape {tuple(t.shape)}")
        if t.dtype not in DTYPES:
            raise ValueError(f"sageattention: {name} must be float16, bfloat16 or float32, got {t.dtype}")
    q, k, v = tensors
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"sageattention: q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"sageattention: q, k, v must be on one device, got {q.device}, {k.device}, {v.device}")
    if q.device.type not in ("cuda", "meta"):
        raise ValueError(f"sageattention: q, k, v must be CUDA tensors, got device {q.device}")
    if k.shape != v.shape:
        raise ValueError(f"sageattention: k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}")


# The largest head_dim the kernels take (sageattn/abi.h: SA_MAX_HEAD_DIM, through the generated _routes).
MAX_HEAD_DIM = _routes.MAX_HEAD_DIM


def padded_head_dim(d):
    """The head dim the kernels run at (sageattn.h: sa_padded_head_dim): 64, 128, 192 or 256."""
    if d > MAX_HEAD_DIM:
        raise ValueError(f"head_dim {d} > {MAX_HEAD_DIM} is not supported")
    return next(p for p in (64, 128, 192, 256) if d <= p)


def pad_and_align(tensors, d):
    """Head dim padded to a multiple of 8; 16-byte aligned rows with strides in multiples of 8 elements."""
    pad = (-d) % 8
    pointers = not torch.compiler.is_compiling()  # traced tensors have no data pointer
    out = []
    for t in tensors:
        if pad:
            t = F.pad(t, (0, pad))
        st = t.stride()
        if (st[-1] != 1 or any(s % 8 for s in st[:-1])
                or (pointers and t.device.type == "cuda" and t.data_ptr() % 16 != 0)):
            t = t.contiguous()
        out.append(t)
    return out


def check_heads(hq, hk, d):
    if hk == 0 and hq != 0:
        raise ValueError(f"sageattention: k and v have no heads but q has {hq}")
    if hk and hq % hk != 0:
        raise ValueError(
            f"sageattention: the number of query heads ({hq}) must be a multiple of the number of "
            f"key/value heads ({hk}) (GQA)"
        )
    if d > MAX_HEAD_DIM:
        raise ValueError(
            f"sageattention: head_dim {d} is not supported (at most {MAX_HEAD_DIM}; 64, 128, 192 and 256 are "
            "native, the others run padded to the next of them)"
        )
    if d == 0:
        raise ValueError("sageattention: head_dim 0 (q and k have no features)")


def validate(q, k, v, tensor_layout):
    """Check q/k/v for ``tensor_layout``; ValueError/TypeError naming the argument otherwise."""
    _args.check_choice("sageattention", "tensor_layout", tensor_layout, _args.LAYOUTS)
    def layout_text():
        return ("[batch, heads, seq, head_dim]" if tensor_layout == "HND" else "[batch, seq, heads, head_dim]") + \
            f" for tensor_layout={tensor_layout!r}"

    check_tensors(("q", "k", "v"), (q, k, v), 4, layout_text)
    hd, _ = seq_dims(tensor_layout)
    if q.shape[0] != k.shape[0]:
        raise ValueError(f"sageattention: batch of q ({q.shape[0]}) and k ({k.shape[0]}) differ")
    if q.shape[3] != k.shape[3]:
        raise ValueError(f"sageattention: head_dim of q ({q.shape[3]}) and k ({k.shape[3]}) differ")
    check_heads(q.shape[hd], k.shape[hd], q.shape[3])


def is_empty(q, k, tensor_layout) -> bool:
    """No output element, or no key: the result is defined without the kernels (as torch SDPA's)."""
    hd, sd = seq_dims(tensor_layout)
    return min(q.shape[0], q.shape[hd], q.shape[sd], k.shape[sd]) == 0


def empty_result(q, v, tensor_layout, attn_mask, return_lse):
    """torch SDPA's result where is_empty: zeros (a row without keys averages nothing), LSE -inf."""
    if attn_mask is not None:  # a mask must still fit the scores it would mask
        hd, sd = seq_dims(tensor_layout)
        scores = (q.shape[0], q.shape[hd], q.shape[sd], v.shape[sd])
        try:
            fits = torch.broadcast_shapes(tuple(attn_mask.shape), scores) == scores
        except (RuntimeError, AttributeError):
            fits = False
        if not fits:
            raise MaskError(f"of shape {tuple(getattr(attn_mask, 'shape', ()))} does not broadcast to [batch, heads, "
                            f"q_len, kv_len] = {list(scores)}")
    o = q.new_zeros(q.shape[:3] + (v.shape[3],))
    if not return_lse:
        return o
    hd, sd = seq_dims(tensor_layout)
    return o, q.new_full((q.shape[0], q.shape[hd], q.shape[sd]), float("-inf"), dtype=torch.float32)


def prepare(q, k, v, tensor_layout):
    """Validated, non-empty q/k/v in the kernels' dtype; returns (q, k, v, head_dim, q_len) with head_dim
    padded to a multiple of 8."""
    validate(q, k, v, tensor_layout)
    if is_empty(q, k, tensor_layout):
        raise ValueError(f"sageattention: empty input, q {tuple(q.shape)}, k {tuple(k.shape)}")
    return for_kernels(q, k, v, tensor_layout)


def for_kernels(q, k, v, tensor_layout):
    """Validated non-empty q/k/v cast to the kernels' dtype and padded: (q, k, v, head_dim, q_len)."""
    d = q.shape[3]
    dt = kernel_dtype(q.dtype)
    if dt != q.dtype:
        q, k, v = q.to(dt), k.to(dt), v.to(dt)
    q, k, v = pad_and_align((q, k, v), d)
    return q, k, v, d, q.shape[seq_dims(tensor_layout)[1]]


def sm_scale(scale, d):
    return float(scale) if scale is not None else 1.0 / math.sqrt(d)


def mask_padding(mask, q, k, tensor_layout) -> Optional[KeyPadding]:
    """The key-padding mask ``mask`` as per-batch key ranges (None: attends every key); ValueError otherwise."""
    if mask is None:
        return None
    hd, sd = seq_dims(tensor_layout)
    if isinstance(mask, torch.Tensor) and mask.device != q.device:
        raise MaskError(f"is on {mask.device} but q is on {q.device}")
    return key_padding(mask, q.shape[0], q.shape[hd], q.shape[sd], k.shape[sd])


def rows_per_batch(t, tensor_layout):
    """Rows of the seq axis between batch elements (what absolute_starts counts in)."""
    sd = seq_dims(tensor_layout)[1]
    return t.stride(0) // t.stride(sd) if t.stride(sd) else None


def absolute_starts(t, start, tensor_layout):
    """(t, starts): the sa_view seq_start of a dense tensor, rows counted from its data pointer (stride_batch unused)."""
    sd = seq_dims(tensor_layout)[1]
    ss, sb = t.stride(sd), t.stride(0)
    if ss == 0 or sb % ss != 0:
        t = t.contiguous()
        ss, sb = t.stride(sd), t.stride(0)
    per_batch = sb // ss
    if (t.shape[0] - 1) * per_batch + t.shape[sd] >= 2 ** 31:
        raise MaskError(f"left-pads a batch of shape {tuple(t.shape)}, too large for 32-bit row offsets")
    rows = torch.arange(t.shape[0], device=start.device, dtype=torch.int32) * per_batch
    return t, (rows + start).contiguous()


def lse_correction(q, k, tensor_layout, scale, valid=None):
    """The kernels see K - mean(K); the true LSE is larger by scale * q . mean(K) per row.
    ``valid`` ([B, Nk] bool): the mean is over each batch element's attended keys."""
    hd, sd = seq_dims(tensor_layout)
    kf = k.float()
    if valid is None:
        km = kf.mean(dim=sd)  # [B, Hk, D]
    else:
        w = valid.float()
        w = w[:, None, :, None] if tensor_layout == "HND" else w[:, :, None, None]
        km = (kf * w).sum(dim=sd) / valid.sum(dim=1).float()[:, None, None]
    km = km.repeat_interleave(q.shape[hd] // k.shape[hd], dim=1)  # [B, Hq, D]
    qf = q.float() if tensor_layout == "HND" else q.float().transpose(1, 2)
    return torch.matmul(qf, km.unsqueeze(-1)).squeeze(-1) * scale  # [B, Hq, Nq]
