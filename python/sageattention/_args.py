"""The calls SageAttention accepts: upstream SageAttention's, torch SDPA's and flash-attn's.

One place turns every accepted spelling into one ``Call``: ``query``/``key``/
``value`` as aliases of ``q``/``k``/``v``; SDPA's ``attn_mask``, ``dropout_p``
(must be 0), ``scale`` (= ``sm_scale``) and ``enable_gqa``; flash-attn's
``softmax_scale`` (= ``sm_scale``), ``causal`` (= ``is_causal``) and the
arguments that would change the result only at values other than their
neutral ones (``window_size``, ``softcap``, ``alibi_slopes``,
``return_softmax`` / ``return_attn_probs``; ``deterministic`` is either); and
upstream's option values, each mapped to what this build runs.  An alias given
twice with different values, and a flash-attn argument at a value that would
change the result, raise ValueError naming the argument.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import torch

LAYOUTS = {"HND": 0, "NHD": 1}
GRANULARITIES = {"per_block": 0, "per_warp": 1, "per_thread": 2}

# pv_accum_dtype values of upstream's FP16 P.V functions: every one runs fp32
# accumulation ("fp32"), which is at least as accurate as fp16 accumulation.
PV_ACCUM_FP16 = ("fp32", "fp16+fp32", "fp16")
# ... of its FP8 P.V functions: two-level accumulation, a fresh MMA accumulator
# per 64-key tile added to an fp32 buffer.  "fp32+fp16": that tile accumulator
# is fp16 (twice the MMA rate on sm89 / sm120; V is then scaled to +-2.25 so a
# tile's sums fit fp16), on the mma.sync kernels; the sm90 (wgmma) kernels keep
# fp32 there, as upstream's.  "fp32+fp32" and "fp32": an fp32 tile accumulator
# (at least as accurate as upstream's one long 22-bit "fp32" accumulator).
PV_ACCUM_FP8 = ("fp32+fp32", "fp32", "fp32+fp16")
# qk_quant_dtype (SageAttention forks): INT8 Q and K run for every value; int8 is
# at least as accurate as fp8 (e4m3) or int4 quantization of Q and K.
PV_ACCUM_ANY = tuple(dict.fromkeys(PV_ACCUM_FP16 + PV_ACCUM_FP8))
QK_QUANT_DTYPES = ("int8", "fp8", "int4")
QUANTIZATION_BACKENDS = ("triton", "cuda")  # sageattn_qk_int8_pv_fp16_triton: both run our CUDA quantization

# flash-attn's keywords (yunchang and xDiT pass them): (what is accepted, its text for the error).
FLASH_ATTN_NEUTRAL = {
    "window_size": (lambda x: isinstance(x, (tuple, list)) and len(x) == 2 and all(
        isinstance(w, int) and not isinstance(w, bool) and w == -1 for w in x), "(-1, -1) (no sliding window)"),
    "softcap": (lambda x: x is None or (_is_number(x) and float(x) == 0.0), "0.0 or None (no soft-capping)"),
    "alibi_slopes": (lambda x: x is None, "None (no ALiBi bias)"),
    "return_softmax": (lambda x: x is False or x is None, "False (the probabilities are never materialised)"),
    "return_attn_probs": (lambda x: x is False or x is None, "False (the probabilities are never materialised)"),
    "deterministic": (lambda x: isinstance(x, bool), "True or False (flash-attn's backward algorithm; ours is torch SDPA's)"),
}

# Keyword arguments every function takes besides its own parameters.
OPTION_NAMES = ("qk_quant_gran", "qk_quant_dtype", "pv_accum_dtype", "smooth_k", "smooth_v", "quantization_backend")


@dataclass
class Call:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    tensor_layout: str
    is_causal: bool
    sm_scale: Optional[float]
    return_lse: bool
    attn_mask: Optional[torch.Tensor]
    options: Dict[str, Any] = field(default_factory=dict)


def check_choice(fn: str, name: str, value, allowed) -> None:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"sageattention: {fn}: {name} must be one of {list(allowed)}, got {value!r}")


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _causal(fn, name, value):
    """A causal flag as a bool, or None when not given."""
    if value is None:
        return None
    if isinstance(value, torch.SymBool):  # from shapes under torch.compile
        return bool(value)
    if not (isinstance(value, (bool, int)) and value in (0, 1)):
        raise TypeError(f"sageattention: {fn}(): {name} must be a bool, got {value!r}")
    return bool(value)


def take_alias(fn, kwargs, name, alias, value):
    if alias in kwargs:
        if value is not None:
            raise TypeError(f"sageattention: {fn}() got both {name!r} and its alias {alias!r}")
        value = kwargs.pop(alias)
    if value is None:
        raise TypeError(f"sageattention: {fn}() missing the {name!r} tensor (or {alias!r}, SDPA's name)")
    return value


def normalize(fn: str, q, k, v, tensor_layout, is_causal, sm_scale, return_lse, kwargs: dict,
              sdpa_positional: bool = False) -> Call:
    """One Call from an upstream-style or SDPA-style call; kwargs keeps the options left over.

    A fourth positional argument that is a tensor or None is SDPA's attn_mask
    (``F.scaled_dot_product_attention = sageattn`` called positionally).  With
    ``sdpa_positional`` (sageattn, whose positions are q, k, v, tensor_layout,
    is_causal, sm_scale, ...) the next positions are then read in SDPA's order
    too: dropout_p (a number, not a bool), then is_causal (a bool).
    """
    if not kwargs and type(tensor_layout) is str and q is not None and k is not None and v is not None:
        # The usual call, q, k, v and upstream's own arguments only: what the general path below gives it.
        check_choice(fn, "tensor_layout", tensor_layout, LAYOUTS)
        if sm_scale is not None and not _is_number(sm_scale):
            raise TypeError(f"sageattention: {fn}(): sm_scale must be a number or None, got "
                            f"{type(sm_scale).__name__}")
        return Call(q, k, v, tensor_layout, bool(_causal(fn, "is_causal", is_causal)),
                    None if sm_scale is None else float(sm_scale), bool(return_lse), None, {})
    kwargs = dict(kwargs)
    q = take_alias(fn, kwargs, "q", "query", q)
    k = take_alias(fn, kwargs, "k", "key", k)
    v = take_alias(fn, kwargs, "v", "value", v)
    attn_mask = kwargs.pop("attn_mask", None)
    dropout_p = kwargs.pop("dropout_p", 0.0)
    if tensor_layout is None or isinstance(tensor_layout, torch.Tensor):  # SDPA's 4th positional: attn_mask
        if attn_mask is not None:
            raise TypeError(f"sageattention: {fn}() got attn_mask twice (positionally, in tensor_layout's place, "
                            "and by keyword)")
        attn_mask, tensor_layout = tensor_layout, "HND"
        if sdpa_positional and _is_number(is_causal):  # SDPA order: dropout_p, is_causal (scale is keyword-only)
            dropout_p, is_causal = is_causal, False
            if isinstance(sm_scale, bool):
                is_causal, sm_scale = sm_scale, None
    check_choice(fn, "tensor_layout", tensor_layout, LAYOUTS)
    for alias, owner in (("scale", "SDPA"), ("softmax_scale", "flash-attn")):
        value = kwargs.pop(alias, None)
        if value is None:
            continue
        if sm_scale is not None and (not _is_number(value) or float(sm_scale) != float(value)):
            raise ValueError(f"sageattention: {fn}() got sm_scale={sm_scale!r} and {alias}={value!r} ({owner}'s "
                             "name for it); pass one of them")
        sm_scale = value
    if sm_scale is not None and not _is_number(sm_scale):
        raise TypeError(f"sageattention: {fn}(): sm_scale must be a number or None, got {type(sm_scale).__name__}")
    if not _is_number(dropout_p) or float(dropout_p) != 0.0:
        raise ValueError(f"sageattention: {fn}(): dropout_p must be 0 (SageAttention has no attention dropout), "
                         f"got {dropout_p!r}")
    enable_gqa = kwargs.pop("enable_gqa", False)  # GQA always runs when q_heads % kv_heads == 0
    if not isinstance(enable_gqa, bool):
        raise TypeError(f"sageattention: {fn}(): enable_gqa must be a bool, got {type(enable_gqa).__name__}")
    is_causal = _causal(fn, "is_causal", is_causal)
    if "causal" in kwargs:  # flash-attn's name
        causal = _causal(fn, "causal", kwargs.pop("causal"))
        if is_causal is not None and causal is not None and causal != is_causal:
            raise ValueError(f"sageattention: {fn}() got is_causal={is_causal} and causal={causal} (flash-attn's name "
                             "for it); pass one of them")
        is_causal = causal if causal is not None else is_causal
    is_causal = bool(is_causal)
    for name, (neutral, text) in FLASH_ATTN_NEUTRAL.items():
        value = kwargs.pop(name, None)
        if name in ("window_size", "deterministic") and value is None:
            continue
        if not neutral(value):
            raise ValueError(f"sageattention: {fn}(): {name} must be {text}; got {value!r}, which this build cannot "
                             "honour (use flash-attn or torch SDPA for it)")
    if attn_mask is not None and is_causal:
        raise ValueError(f"sageattention: {fn}(): attn_mask and is_causal=True together are not supported "
                         "(torch SDPA refuses them too); fold the causal mask into attn_mask or drop attn_mask")
    for key in kwargs:
        if key not in OPTION_NAMES:
            raise TypeError(f"sageattention: {fn}() got an unexpected keyword argument {key!r}")
    return Call(q, k, v, tensor_layout, is_causal, None if sm_scale is None else float(sm_scale), bool(return_lse),
                attn_mask, kwargs)


@dataclass(frozen=True)
class Options:
    """What runs: the quantization granularity, K/V smoothing, and the P.V path ('fp16', 'fp8' or None: by GPU)."""

    gran: str = "per_thread"
    smooth_k: bool = True
    smooth_v: bool = False
    pv: Optional[str] = None
    # The FP8 P.V's tile accumulator in fp16 ("fp32+fp16"); None: as sageattn picks for the GPU.
    pv_accum_f16: Optional[bool] = None


_OPTIONS: Dict[tuple, Options] = {}  # options() of calls without keyword options, by (fn, family, defaults)


def options(fn: str, opts: Dict[str, Any], family: str, defaults: Optional[Dict[str, Any]] = None) -> Options:
    """Validate upstream's knobs for a function of ``family`` ('fp16', 'fp8' or 'any')."""
    if opts:
        return _options(fn, opts, family, defaults)
    try:  # a function's own keyword values: the same few on every call
        key = (fn, family) + (tuple((k, type(x), x) for k, x in defaults.items()) if defaults else ())
        got = _OPTIONS.get(key)
    except TypeError:  # an unhashable value: the checks below name it
        return _options(fn, opts, family, defaults)
    if got is None:
        got = _options(fn, opts, family, defaults)
        if len(_OPTIONS) < 256:
            _OPTIONS[key] = got
    return got


def _options(fn: str, opts: Dict[str, Any], family: str, defaults: Optional[Dict[str, Any]]) -> Options:
    o = dict(defaults or {})
    o.update(opts)
    gran = o.get("qk_quant_gran", "per_thread")
    check_choice(fn, "qk_quant_gran", gran, GRANULARITIES)
    check_choice(fn, "qk_quant_dtype", o.get("qk_quant_dtype", "int8"), QK_QUANT_DTYPES)
    check_choice(fn, "quantization_backend", o.get("quantization_backend", "cuda"), QUANTIZATION_BACKENDS)
    accum = o.get("pv_accum_dtype")
    pv = None if family == "any" else family
    if accum is not None:
        allowed = {"fp16": PV_ACCUM_FP16, "fp8": PV_ACCUM_FP8, "any": PV_ACCUM_ANY}[family]
        check_choice(fn, "pv_accum_dtype", accum, allowed)
    for name in ("smooth_k", "smooth_v"):
        if name in o and not isinstance(o[name], (bool, int)):
            raise TypeError(f"sageattention: {fn}(): {name} must be a bool, got {type(o[name]).__name__}")
    f16 = None if accum is None or family == "fp16" else accum == "fp32+fp16"
    return Options(gran=gran, smooth_k=bool(o.get("smooth_k", True)), smooth_v=bool(o.get("smooth_v", False)), pv=pv,
                   pv_accum_f16=f16)
