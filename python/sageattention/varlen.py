"""``sageattn_varlen``: attention over packed variable-length sequences.

q, k, v are [total_tokens, heads, head_dim]; the cumulative lengths say where
each sequence's rows are.  The ops take them as the packed tensor layout (2).
"""
from __future__ import annotations

import dataclasses
import functools

import torch

from . import _arch, _args, _autograd, _tensors
from ._dispatch import V_MAX, V_MAX_F16ACC, for_gpu

_PACKED = 2  # the ops' tensor_layout for packed sequences [total, heads, head_dim]


def _seqlens(name, cu, batch_hint, device):
    if not isinstance(cu, torch.Tensor):
        raise TypeError(f"sageattention: {name} must be a torch.Tensor, got {type(cu).__name__}")
    if cu.dim() != 1 or cu.numel() < 2 or cu.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"sageattention: {name} must be a 1-D int32 or int64 tensor of batch + 1 cumulative "
                         f"lengths, got {cu.dtype} of shape {tuple(cu.shape)}")
    if batch_hint is not None and cu.numel() != batch_hint:
        raise ValueError(f"sageattention: cu_seqlens_q and cu_seqlens_k must have the same length, got "
                         f"{batch_hint} and {cu.numel()}")
    cu = cu.to(device=device, dtype=torch.int32)
    return cu[:-1].contiguous(), (cu[1:] - cu[:-1]).contiguous()


def _check_cu_values(name, cu, total, max_len, max_name):
    """Full checks of cumulative lengths given on the CPU (free there; on the GPU they would cost a sync)."""
    c = cu.tolist()
    if any(b < a for a, b in zip(c, c[1:])) or c[0] < 0 or c[-1] > total:
        raise ValueError(f"sageattention: {name} must be non-decreasing within [0, {total}] (the rows of the packed "
                         f"tensor), got {c}")
    longest = max(b - a for a, b in zip(c, c[1:]))
    if longest > max_len:
        raise ValueError(f"sageattention: {max_name} ({max_len}) is smaller than the longest sequence in {name} "
                         f"({longest})")


def _max_seqlen(name, m):
    if isinstance(m, torch.Tensor):
        m = int(m.item())
    if isinstance(m, bool) or not isinstance(m, (int, torch.SymInt)) or m < 1:
        raise ValueError(f"sageattention: {name} must be a positive int, got {m!r}")
    return m


def sageattn_varlen(q=None, k=None, v=None, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
                    max_seqlen_k=None, is_causal=None, sm_scale=None, smooth_k=True, **kwargs):
    """Attention over packed variable-length sequences (upstream's signature), one kernel launch per step.

    q: [total_q, Hq, D], k, v: [total_k, Hk, D] (fp16/bf16/fp32, CUDA, Hq % Hk == 0); cu_seqlens_q/_k:
    [batch + 1] int32/int64 cumulative lengths (sequence b is rows cu[b] .. cu[b+1]);
    max_seqlen_q/_k: the longest sequence of each (they size the launch).  Returns o [total_q, Hq, D]
    in q's dtype.  Causal masking is top-left aligned per sequence (query i of a sequence sees its
    keys j <= i; identical to bottom-right when the q and k lengths agree).  K is smoothed by the
    mean of each sequence's own keys (upstream: the mean over all sequences).  A sequence without
    keys gives zeros.  Output rows that no sequence covers are left unwritten.

    Lengths on the GPU are trusted (checking them would cost a host sync): each must be at most
    max_seqlen, and cu must be non-decreasing within the packed rows.  On the CPU they are checked.

    Runs the FP16 P.V path (as upstream's varlen kernel) with per-thread INT8 Q/K scales; a
    pv_accum_dtype of the FP8 path ("fp32+fp32", "fp32+fp16") runs the FP8 P.V path (sm89+).
    Also accepted: qk_quant_gran, smooth_v, scale (= sm_scale), query/key/value, dropout_p = 0.
    """
    fn = "sageattn_varlen"
    kwargs = dict(kwargs)
    q = _args.take_alias(fn, kwargs, "q", "query", q)
    k = _args.take_alias(fn, kwargs, "k", "key", k)
    v = _args.take_alias(fn, kwargs, "v", "value", v)
    if kwargs.pop("return_lse", False):
        raise ValueError("sageattention: sageattn_varlen does not return the LSE (return_lse=True); use sageattn on "
                         "padded batches for it")
    call = _args.normalize(fn, q, k, v, "HND", is_causal, sm_scale, False, kwargs)
    if call.attn_mask is not None:
        raise ValueError("sageattention: sageattn_varlen takes no attn_mask: the cu_seqlens give each sequence's "
                         "keys")
    opts = _args.options(fn, call.options, "any", dict(smooth_k=smooth_k))
    accum = call.options.get("pv_accum_dtype")
    path = "fp8" if accum in ("fp32+fp32", "fp32+fp16") else "fp16"
    q, k, v = call.q, call.k, call.v
    _tensors.check_tensors(("q", "k", "v"), (q, k, v), 3, "[total_tokens, heads, head_dim]")
    if q.shape[2] != k.shape[2]:
        raise ValueError(f"sageattention: head_dim of q ({q.shape[2]}) and k ({k.shape[2]}) differ")
    d = q.shape[2]
    _tensors.check_heads(q.shape[1], k.shape[1], d)
    if min(q.shape[0], q.shape[1], k.shape[0], k.shape[1], d) == 0:
        raise ValueError(f"sageattention: empty input, q {tuple(q.shape)}, k {tuple(k.shape)}")
    max_q = _max_seqlen("max_seqlen_q", max_seqlen_q)
    max_k = _max_seqlen("max_seqlen_k", max_seqlen_k)
    for name, cu, total, m, mname in (("cu_seqlens_q", cu_seqlens_q, q.shape[0], max_q, "max_seqlen_q"),
                                      ("cu_seqlens_k", cu_seqlens_k, k.shape[0], max_k, "max_seqlen_k")):
        if isinstance(cu, torch.Tensor) and cu.device.type == "cpu" and cu.dim() == 1 and cu.numel() >= 2:
            _check_cu_values(name, cu, total, m, mname)
    q_start, q_len = _seqlens("cu_seqlens_q", cu_seqlens_q, None, q.device)
    k_start, k_len = _seqlens("cu_seqlens_k", cu_seqlens_k, cu_seqlens_q.numel(), q.device)
    _arch.require_kernels(q, need_fp8=path == "fp8")
    forward = functools.partial(_packed_forward, seqs=_Packed(q_start, q_len, k_start, k_len, max_q, max_k))
    opts = for_gpu(dataclasses.replace(opts, pv=path), q)
    if _autograd.needs_graph(q, k, v):
        return _autograd.attend_in_graph(call, opts, forward, mode="varlen")
    return forward(call, opts)


@dataclasses.dataclass(frozen=True)
class _Packed:
    """Where each sequence's rows are: starts and lengths (int32, on q's device) and the longest of each."""

    q_start: torch.Tensor
    q_len: torch.Tensor
    k_start: torch.Tensor
    k_len: torch.Tensor
    max_q: int
    max_k: int


def _packed_forward(call: _args.Call, opts: _args.Options, seqs: _Packed):
    """The kernels over packed sequences: call's q/k/v checked, opts.pv resolved."""
    q, k, v = call.q, call.k, call.v
    d = q.shape[2]
    dt = _tensors.kernel_dtype(q.dtype)
    q, k, v = _tensors.pad_and_align((q.to(dt), k.to(dt), v.to(dt)), d)
    scale = _tensors.sm_scale(call.sm_scale, d)
    v_div = None
    if call.q.dtype == torch.float32 and opts.pv == "fp16":  # V read as fp16: keep fp32's large values
        v, v_div = _tensors.into_fp16_range(v)
    ops = torch.ops.sageattention
    g = _args.GRANULARITIES[opts.gran]
    q_start, q_len, k_start, k_len, max_q, max_k = (seqs.q_start, seqs.q_len, seqs.k_start, seqs.k_len, seqs.max_q,
                                                    seqs.max_k)
    fp8 = opts.pv != "fp16"
    f16 = fp8 and bool(opts.pv_accum_f16)
    # Q, K and (fp8 path) V quantized in one call: two launches
    q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean = ops.quant_qkv(
        q, k, v if fp8 else None, _PACKED, g, opts.smooth_k, opts.smooth_v, q_start, q_len, max_q, k_start, k_len,
        max_k, V_MAX_F16ACC if f16 else V_MAX)
    if not fp8:
        v16 = v if v.dtype == torch.float16 else v.to(torch.float16)
        o, _ = ops.attn_pv_fp16(q_int8, q_scale, k_int8, k_scale, v16, _PACKED, max_q, call.is_causal, scale, False,
                                q.dtype, q_start, q_len, k_start, k_len, q.shape[0], max_k)
    else:
        o, _ = ops.attn_pv_fp8(q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean if opts.smooth_v else None,
                               _PACKED, max_q, max_k, q.shape[2], call.is_causal, scale, False, q.dtype, q_start,
                               q_len, k_len, q.shape[0], f16)
    o = o[..., :d] if o.shape[-1] != d else o
    o = o.to(call.q.dtype) if o.dtype != call.q.dtype else o
    return o * v_div if v_div is not None else o
