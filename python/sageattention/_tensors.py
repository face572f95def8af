"""Tensor preparation around the kernels: checks, head-dim padding and alignment,
a mask's key ranges, and the result's finishing (head dim cut back, LSE corrected
for K smoothing)."""
from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F

from . import _args
from .masks import KeyPadding, MaskError, key_padding


def seq_dims(tensor_layout):
    """(heads dim, seq dim) of a 4-D tensor in ``tensor_layout``."""
    return (1, 2) if tensor_layout == "HND" else (2, 1)


def check_tensors(names, tensors, rank, shape_text):
    for name, t in zip(names, tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"sageattention: {name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != rank:
            raise ValueError(f"sageattention: {name} must be {rank}-D ({shape_text}), got shape {tuple(t.shape)}")
        if t.dtype not in (torch.float16, torch.bfloat16):
            raise ValueError(f"sageattention: {name} must be float16 or bfloat16, got {t.dtype}")
    q, k, v = tensors
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"sageattention: q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"sageattention: q, k, v must be on one device, got {q.device}, {k.device}, {v.device}")
    if q.device.type not in ("cuda", "meta"):
        raise ValueError(f"sageattention: q, k, v must be CUDA tensors, got device {q.device}")
    if k.shape != v.shape:
        raise ValueError(f"sageattention: k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}")


def pad_and_align(tensors, d):
    """Head dim padded to a multiple of 8; 16-byte aligned rows with strides in multiples of 8 elements."""
    pad = (-d) % 8
    out = []
    for t in tensors:
        if pad:
            t = F.pad(t, (0, pad))
        misaligned = t.device.type == "cuda" and not torch.compiler.is_compiling() and t.data_ptr() % 16 != 0
        if t.stride(-1) != 1 or any(s % 8 for s in t.stride()[:-1]) or misaligned:
            t = t.contiguous()
        out.append(t)
    return out


def check_heads(hq, hk, d):
    if hq % hk != 0:
        raise ValueError(
            f"sageattention: the number of query heads ({hq}) must be a multiple of the number of "
            f"key/value heads ({hk}) (GQA)"
        )
    if d > 128:
        raise ValueError(f"sageattention: head_dim {d} is not supported (at most 128; 64 and 128 are native)")


def prepare(q, k, v, tensor_layout):
    """Validate q/k/v; return (q, k, v, head_dim, q_len) with head_dim padded to a multiple of 8."""
    _args.check_choice("sageattention", "tensor_layout", tensor_layout, _args.LAYOUTS)
    layout_text = ("[batch, heads, seq, head_dim]" if tensor_layout == "HND" else "[batch, seq, heads, head_dim]") + \
        f" for tensor_layout={tensor_layout!r}"
    check_tensors(("q", "k", "v"), (q, k, v), 4, layout_text)
    hd, sd = seq_dims(tensor_layout)
    if q.shape[0] != k.shape[0]:
        raise ValueError(f"sageattention: batch of q ({q.shape[0]}) and k ({k.shape[0]}) differ")
    if q.shape[3] != k.shape[3]:
        raise ValueError(f"sageattention: head_dim of q ({q.shape[3]}) and k ({k.shape[3]}) differ")
    d = q.shape[3]
    check_heads(q.shape[hd], k.shape[hd], d)
    if min(q.shape[sd], k.shape[sd], q.shape[0], q.shape[hd], k.shape[hd], d) == 0:
        raise ValueError(f"sageattention: empty input, q {tuple(q.shape)}, k {tuple(k.shape)}")
    q, k, v = pad_and_align((q, k, v), d)
    return q, k, v, d, q.shape[sd]


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
