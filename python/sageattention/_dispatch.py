"""One dense attention call onto the ops: ``attend(call, opts)``.

``call`` (an ``_args.Call``) holds the tensors and what the caller asked for,
``opts`` (an ``_args.Options``) what runs: the P.V path, the quantization
granularity and the smoothing.  The whole forward is one op
(``sageattention::attn``), or, where V's rows are laid out apart from K's,
the quantization and attention ops one after the other.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import torch

from . import _arch, _autograd, _tensors
from ._args import GRANULARITIES, LAYOUTS, Call, Options
from .masks import KeyPadding

# The e4m3 range V is scaled to (sageattn.h: SA_V_MAX, SA_V_MAX_F16ACC): 448, or
# 2.25 when the P.V accumulates key tiles in fp16 (64 keys x 448 x 2.25 < 65504).
V_MAX, V_MAX_F16ACC = 448.0, 2.25


def _run_dense(q, k, v, layout: str, causal: bool, scale: float, lse: bool, opts: Options,
               kp: Optional[KeyPadding]):
    """q, k, v as _tensors.for_kernels returns them, sm_scale resolved; kp: a mask's key ranges."""
    lay = LAYOUTS[layout]
    ops = torch.ops.sageattention
    g = GRANULARITIES[opts.gran]
    smooth_k, smooth_v = bool(opts.smooth_k), bool(opts.smooth_v)
    f16 = bool(opts.pv_accum_f16)  # for_gpu: never on the FP16 path
    kv_n = kp.length if kp is not None else None
    left = kp is not None and kp.left
    k_start = None
    if left:
        k, k_start = _tensors.absolute_starts(k, kp.start, layout)
    # The whole forward in one op (one dispatch, no Python between the kernels), unless V's rows are laid out
    # apart from K's (a left-padding mask over a V that was copied to fp16): then the steps below.
    vv = v if opts.pv == "fp8" or v.dtype == torch.float16 else v.to(torch.float16)
    if left:
        vv, _ = _tensors.absolute_starts(vv, kp.start, layout)
    if k_start is None or _tensors.rows_per_batch(vv, layout) == _tensors.rows_per_batch(k, layout):
        return ops.attn(q, k, vv, lay, causal, g, scale, smooth_k, smooth_v, opts.pv == "fp8", lse, k_start, kv_n, f16)
    d_pad = q.shape[3]
    sd = _tensors.seq_dims(layout)[1]
    q_len, kv_len = q.shape[sd], k.shape[sd]
    q_int8, q_scale, k_int8, k_scale, _, _, _ = ops.quant_qkv(q, k, None, lay, g, smooth_k, False, None, None, 0,
                                                             k_start, kv_n)
    v_start = None
    if opts.pv == "fp16":
        v16 = v if v.dtype == torch.float16 else v.to(torch.float16)
        if left:
            v16, v_start = _tensors.absolute_starts(v16, kp.start, layout)
        return ops.attn_pv_fp16(q_int8, q_scale, k_int8, k_scale, v16, lay, q_len, causal, scale, lse, q.dtype,
                                None, None, v_start, kv_n)
    if left:
        v, v_start = _tensors.absolute_starts(v, kp.start, layout)
    v_fp8, v_scale, v_mean = ops.quant_v_fp8(v, lay, smooth_v, v_start, kv_n, 0, V_MAX_F16ACC if f16 else V_MAX)
    return ops.attn_pv_fp8(q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean if smooth_v else None, lay,
                           q_len, kv_len, d_pad, causal, scale, lse, q.dtype, None, None, kv_n, 0, f16)


def attend(call: Call, opts: Options, kp: Optional[KeyPadding] = None):
    """Run ``call`` as ``opts`` says (``opts.pv`` resolved to 'fp16' or 'fp8'); ``kp``: key ranges found
    beforehand (patch_sdpa's plan), else those of ``call.attn_mask``.  Returns o, or (o, lse)."""
    _tensors.validate(call.q, call.k, call.v, call.tensor_layout)
    if _tensors.is_empty(call.q, call.k, call.tensor_layout):
        return _tensors.empty_result(call.q, call.v, call.tensor_layout, call.attn_mask, call.return_lse)
    q, k, v, d, _ = _tensors.for_kernels(call.q, call.k, call.v, call.tensor_layout)
    if call.attn_mask is not None:
        kp = _tensors.mask_padding(call.attn_mask, q, k, call.tensor_layout)
    scale = _tensors.sm_scale(call.sm_scale, d)
    v_div = None
    if call.q.dtype == torch.float32 and opts.pv == "fp16":  # V read as fp16: keep fp32's large values
        v, v_div = _tensors.into_fp16_range(v)
    o, lse = _run_dense(q, k, v, call.tensor_layout, bool(call.is_causal), scale, bool(call.return_lse), opts, kp)
    if o.shape[-1] != d:
        o = o[..., :d]
    if o.dtype != call.q.dtype:  # fp32 inputs ran as bf16
        o = o.to(call.q.dtype)
    if v_div is not None:
        o = o * v_div
    if not call.return_lse:
        return o
    if opts.smooth_k:
        lse = lse + _tensors.lse_correction(q, k, call.tensor_layout, scale, kp.valid if kp is not None else None)
    return o, lse


_RESOLVED: dict = {}  # for_gpu's answers: (opts, pv, pv_accum_f16) -> Options (frozen, so shared)


def for_gpu(opts: Options, q) -> Options:
    """opts with what the caller left open chosen for q's GPU: the P.V path, and whether the FP8 P.V
    accumulates its key tiles in fp16 (never on the FP16 path)."""
    f16 = opts.pv_accum_f16
    if opts.pv is None or (opts.pv == "fp8" and f16 is None):
        default_pv, default_f16 = _arch.call_defaults(q)
        path = opts.pv or default_pv
        if f16 is None:
            f16 = default_f16
    else:
        path = opts.pv
    if path != "fp8":
        f16 = False
    if path == opts.pv and f16 is opts.pv_accum_f16:
        return opts
    key = (opts, path, f16)
    got = _RESOLVED.get(key)
    if got is None:
        got = dataclasses.replace(opts, pv=path, pv_accum_f16=f16)
        if len(_RESOLVED) < 256:
            _RESOLVED[key] = got
    return got


def run_call(call: Call, opts: Options):
    """A public function's call: the P.V path chosen by the GPU unless the function fixes it; in the
    autograd graph when an input requires grad (see _autograd), else straight to the kernels."""
    opts = for_gpu(opts, call.q)
    _arch.require_kernels(call.q, need_fp8=opts.pv == "fp8")
    if _autograd.needs_graph(call.q, call.k, call.v, call.attn_mask):
        return _autograd.attend_in_graph(call, opts, attend)
    return attend(call, opts)
