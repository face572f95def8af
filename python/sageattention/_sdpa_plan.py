"""torch SDPA's calls that SageAttention runs, for patch_sdpa: ``sdpa_plan``
says whether a call can run here (and why not), ``sdpa_run`` runs one it accepted."""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Dict, Optional

import torch

from . import _arch, _autograd, _sdpa_route, _tensors
from ._args import Call, Options
from ._dispatch import attend, for_gpu
from .masks import KeyPadding, MaskError


@dataclass(frozen=True)
class SdpaPlan:
    """A torch SDPA call that SageAttention runs: HND tensors, the P.V path, the mask's key ranges."""

    path: str
    kp: Optional[KeyPadding]


# The plans of unmasked calls, by everything their plan depends on (_call_key): a model repeats the same
# few shapes, and planning one anew costs about as much host time as SDPA's own call at 1k tokens.
_PLANS: Dict[tuple, tuple] = {}
_PLANS_MAX = 1024


def _call_key(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, route) -> Optional[tuple]:
    """What sdpa_plan's answer for this call depends on, or None where it is planned afresh every time: a mask
    (its analysis is per call), a trace, inputs other than plain tensors (subclasses, nested), a tensor-valued
    dropout or scale.  Besides the tensors' device, dtype, shape, strides and grad flags and the arguments:
    grad mode, the backward mode and SDPA's backend switches (its choice of backend).  Whether the sm90 kernels
    run ($SAGEATTN_SM90: which crossover table) is read once a process, so it is no part of the key."""
    if attn_mask is not None or torch.compiler.is_compiling():
        return None
    if not (type(query) is torch.Tensor and type(key) is torch.Tensor and type(value) is torch.Tensor):
        return None
    if query.is_nested or key.is_nested or value.is_nested:
        return None
    if not (isinstance(dropout_p, (int, float)) and (scale is None or isinstance(scale, (int, float)))):
        return None
    cuda = torch.backends.cuda
    return (route, dropout_p, bool(is_causal), scale, bool(enable_gqa), torch.is_grad_enabled(),
            _autograd.backward_setting(), torch.backends.cudnn.enabled,
            cuda.cudnn_sdp_enabled(), cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(),
            cuda.math_sdp_enabled(),
            *[(t.device, t.dtype, t.shape, t.stride(), t.requires_grad) for t in (query, key, value)])


def sdpa_plan(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, route="sageattention"):
    """(plan, None) when SageAttention can run this SDPA call, else (None, why): the reason a call falls back.
    ``route`` (sageattention._sdpa_route): "auto" also sends a call to SDPA where that is faster on its GPU
    (reason _sdpa_route.SPEED_REASON), "sdpa" every call.  An unmasked call's answer is kept (_call_key)."""
    k = _call_key(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, route)
    if k is None:
        return _plan(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, route)
    found = _PLANS.get(k)
    if found is None:
        found = _plan(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, route)
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[k] = found
    return found


def _plan(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, route):
    if route == "sdpa":
        return None, "route 'sdpa' (every call to torch SDPA)"
    ts = (query, key, value)
    if not all(isinstance(t, torch.Tensor) for t in ts):
        return None, "not tensors"
    if any(t.is_nested for t in ts):
        return None, "nested tensor"
    if query.device.type != "cuda":
        return None, f"device {query.device.type}"
    if not (query.device == key.device == value.device):
        return None, "tensors on different devices"
    if query.dtype not in (torch.float16, torch.bfloat16):
        return None, f"dtype {str(query.dtype).replace('torch.', '')}"
    if not (query.dtype == key.dtype == value.dtype):
        return None, "mixed dtypes"
    if not (query.dim() == key.dim() == value.dim() == 4):
        return None, f"{query.dim()}-D tensors (4-D [batch, heads, seq, dim] only)"
    if _autograd.needs_graph(*ts, attn_mask) and _autograd.backward_mode() != "sdpa":
        return None, "autograd (SageAttention has no backward)"
    if dropout_p:
        return None, "dropout_p > 0"
    d = query.shape[-1]
    if key.shape[-1] != d or value.shape[-1] != d:
        return None, "value head_dim differs from query's"
    if d > _tensors.MAX_HEAD_DIM:
        return None, f"head_dim {d} > {_tensors.MAX_HEAD_DIM}"
    if query.shape[0] != key.shape[0] or key.shape != value.shape:
        return None, "batch or key/value shapes differ (broadcast batch)"
    hq, hk = query.shape[1], key.shape[1]
    if hq != hk and not (enable_gqa and hq % hk == 0):
        return None, "q heads != kv heads without enable_gqa"
    if min(query.shape[2], key.shape[2], d) == 0:
        return None, "empty tensor"
    if attn_mask is not None and is_causal:
        return None, "attn_mask with is_causal"
    reason = _arch.unsupported_reason(query.device)
    if reason is not None:
        return None, "GPU or build not supported"
    if route == "auto":  # before the mask's analysis, which costs a host synchronisation
        table = _sdpa_route.table_for_device(_arch._capability(_arch._device_index(query.device)))
        why = None if table is None else _sdpa_route.sdpa_is_faster(table, query, key, value, attn_mask, dropout_p,
                                                                     is_causal, scale, enable_gqa)
        if why:
            return None, _sdpa_route.SpeedReason(table, why)
    path = _arch.default_path(query)
    kp = None
    if attn_mask is not None:
        try:
            kp = _tensors.mask_padding(attn_mask, query, key, "HND")
        except MaskError as e:
            return None, "attn_mask " + e.reason
    return SdpaPlan(path, kp), None


# What an SDPA call runs, by P.V path (Options are frozen, so shared).
_OPTIONS = {pv: Options(gran="per_thread", smooth_k=True, smooth_v=False, pv=pv) for pv in ("fp8", "fp16")}


def sdpa_run(plan: SdpaPlan, query, key, value, is_causal, scale, attn_mask=None):
    """Run an SDPA call that sdpa_plan accepted (HND layout, SDPA's default scale 1/sqrt(head_dim))."""
    # The FP8 P.V's accumulation as sageattn picks it for the GPU (for_gpu).
    opts = for_gpu(_OPTIONS[plan.path], query)
    if _autograd.needs_graph(query, key, value, attn_mask):  # opted in to SDPA's gradients (sdpa_plan)
        call = Call(query, key, value, "HND", bool(is_causal), scale, False, attn_mask)  # the mask: for the backward
        return _autograd.attend_in_graph(call, opts, functools.partial(_attend_planned, kp=plan.kp))
    return attend(Call(query, key, value, "HND", bool(is_causal), scale, False, None), opts, plan.kp)


def _attend_planned(call: Call, opts: Options, kp: Optional[KeyPadding]):
    """attend() with the mask's key ranges sdpa_plan found (the mask itself stays for the backward's SDPA)."""
    return attend(dataclasses.replace(call, attn_mask=None), opts, kp)
