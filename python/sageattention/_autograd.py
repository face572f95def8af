"""Attention inside the autograd graph: gradients are never dropped silently.

SageAttention's kernels have no backward pass.  When grad mode is on and q, k,
v or attn_mask require grad, the call runs as the ``_Attention`` function, so
the output stays in the graph, and its backward either

* raises (the default) a RuntimeError that names the ways out: torch SDPA for
  training (``patch_sdpa()`` sends such calls there) or the opt-in below; or
* with ``SAGEATTN_BACKWARD=sdpa`` in the environment or
  ``sageattention.set_backward("sdpa")``, computes the exact gradients of
  attention by recomputing the call through torch's SDPA (math in the inputs'
  dtype; the forward's output stays the quantized one).  This costs one SDPA
  forward and backward per call and keeps q, k, v alive until backward.

Gradients through the returned LSE are not computed: using it in a loss
raises at backward.  Calls under ``no_grad`` / ``inference_mode`` or with
inputs that do not require grad skip all of this (one flag check).
"""
from __future__ import annotations

import dataclasses
import os
from typing import List, Optional

import torch

ENV = "SAGEATTN_BACKWARD"
MODES = ("error", "sdpa")
_mode: Optional[str] = None  # set_backward's choice; None: the environment's
# torch's own function, whatever patch_sdpa() has put in torch.nn.functional
_TORCH_SDPA = torch._C._nn.scaled_dot_product_attention

NO_BACKWARD = (
    "sageattention: SageAttention has no backward pass, so the gradients of this attention call cannot be computed "
    "(its output stays in the autograd graph so that they are not silently dropped). For training, use torch's "
    "scaled_dot_product_attention: sageattention.patch_sdpa() routes calls whose inputs require grad there. Or opt "
    "in to exact gradients recomputed through torch SDPA (the forward stays quantized): set SAGEATTN_BACKWARD=sdpa "
    "or call sageattention.set_backward('sdpa').")

NO_BACKWARD_VARLEN = (
    "sageattention: sageattn_varlen has no backward pass, so the gradients of this call cannot be computed (its "
    "output stays in the autograd graph so that they are not silently dropped). For training, use flash-attn's "
    "flash_attn_varlen_func or torch's scaled_dot_product_attention per sequence.")


def set_backward(mode: Optional[str]) -> None:
    """What backward does for calls whose inputs require grad: ``"error"`` (raise, naming the ways out),
    ``"sdpa"`` (exact gradients recomputed through torch SDPA), or None (the environment's
    SAGEATTN_BACKWARD, default "error")."""
    global _mode
    if mode is not None and mode not in MODES:
        raise ValueError(f"sageattention: set_backward: mode must be one of {list(MODES)} or None, got {mode!r}")
    _mode = mode


def backward_setting() -> tuple:
    """What backward_mode() reads (set_backward's choice, the environment's value), unchecked: a key for
    whatever depends on the mode, so that a bad value still raises only where the mode is used."""
    return _mode, os.environ.get(ENV)


def backward_mode() -> str:
    if _mode is not None:
        return _mode
    mode = os.environ.get(ENV, "error") or "error"
    if mode not in MODES:
        raise ValueError(f"sageattention: {ENV}={mode!r}; expected one of {list(MODES)}")
    return mode


def needs_graph(*tensors) -> bool:
    """Whether a call with these inputs must stay in the autograd graph."""
    return torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors)


@torch.library.custom_op("sageattention_autograd::refuse_backward", mutates_args=())
def _refuse_backward(grad: torch.Tensor, shape: List[int], dtype: torch.dtype) -> torch.Tensor:
    """The backward of a call that did not opt in, under torch.compile: raises when it runs.  An op (not a
    Python raise) so that the compiler traces the backward and the error comes at backward(), as in eager
    mode (the fake kernel only gives shapes)."""
    raise RuntimeError(NO_BACKWARD)


@_refuse_backward.register_fake
def _(grad, shape, dtype):
    return grad.new_empty(shape, dtype=dtype)


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, attn_mask, call, opts, forward, mode):
        ctx.set_materialize_grads(False)
        ctx.call, ctx.mode = call, mode
        if mode == "sdpa":
            ctx.save_for_backward(q, k, v, attn_mask)
        else:
            ctx.inputs = [(t.shape, t.dtype) if isinstance(t, torch.Tensor) and t.requires_grad else None
                          for t in (q, k, v, attn_mask)]
        return forward(dataclasses.replace(call, q=q, k=k, v=v, attn_mask=attn_mask), opts)

    @staticmethod
    def backward(ctx, grad_o, grad_lse=None):
        if ctx.mode != "sdpa":
            if not torch.compiler.is_compiling():
                raise RuntimeError(NO_BACKWARD_VARLEN if ctx.mode == "varlen" else NO_BACKWARD)
            grad = grad_o if grad_o is not None else grad_lse
            refused = tuple(_refuse_backward(grad, list(i[0]), i[1]) if i is not None else None for i in ctx.inputs)
            return (*refused, None, None, None, None)
        if grad_lse is not None:
            raise RuntimeError("sageattention: the gradient through the returned LSE (return_lse=True) is not "
                               "computed; only the output's gradients are recomputed through torch SDPA")
        grads = sdpa_grads(*ctx.saved_tensors, ctx.call, grad_o) if grad_o is not None else (None,) * 4
        return (*grads, None, None, None, None)


def sdpa_grads(q, k, v, attn_mask, call, grad_o):
    """Exact gradients of attention (torch SDPA's) for ``call`` at q, k, v (and a float attn_mask that requires
    grad), given the output's gradient; None for inputs that do not require grad."""
    wants = [isinstance(t, torch.Tensor) and t.requires_grad for t in (q, k, v, attn_mask)]
    if q.numel() == 0 or k.numel() == 0:  # the output does not depend on the inputs (and torch's SDPA dies
        # of SIGFPE on zero heads)
        return tuple(torch.zeros_like(t) if w else None for t, w in zip((q, k, v, attn_mask), wants))
    nhd = call.tensor_layout == "NHD"

    def attention(q, k, v, attn_mask):
        if nhd:
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        o = _TORCH_SDPA(q, k, v, attn_mask=attn_mask, is_causal=call.is_causal, scale=call.sm_scale,
                        enable_gqa=q.shape[1] != k.shape[1])
        return o.transpose(1, 2) if nhd else o

    if wants[3]:
        _, vjp = torch.func.vjp(attention, q, k, v, attn_mask)
        grads = vjp(grad_o)
    else:
        _, vjp = torch.func.vjp(lambda q, k, v: attention(q, k, v, attn_mask), q, k, v)
        grads = vjp(grad_o) + (None,)
    return tuple(g if w else None for g, w in zip(grads, wants))


def attend_in_graph(call, opts, forward, mode: Optional[str] = None):
    """``forward(call, opts)`` run as one autograd node (see the module's docstring); ``mode`` "varlen":
    sageattn_varlen's, whose backward always refuses (no per-sequence recompute)."""
    bare = dataclasses.replace(call, q=None, k=None, v=None, attn_mask=None)
    return _Attention.apply(call.q, call.k, call.v, call.attn_mask, bare, opts, forward, mode or backward_mode())
