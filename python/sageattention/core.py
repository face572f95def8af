"""Python API of SageAttention: upstream's functions and SDPA's arguments, dispatch by GPU arch.

Every function takes upstream SageAttention's arguments and torch SDPA's
(``query``/``key``/``value``, ``attn_mask``, ``dropout_p`` = 0, ``scale``,
``enable_gqa``; see ``_args``).  Masks: key-padding masks run natively (see
``masks``); any other mask raises ``ValueError`` naming ``attn_mask``.
"""
from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F

from . import _args
from .masks import KeyPadding, MaskError, key_padding

_LAYOUTS = _args.LAYOUTS
_GRANULARITIES = _args.GRANULARITIES
_PACKED = 2  # the ops' tensor_layout for packed sequences [total, heads, head_dim]

_C = None
_C_ERROR: Optional[BaseException] = None
try:  # the import registers torch.ops.sageattention.*
    from . import _C  # type: ignore  # noqa: F401
except Exception as e:  # pragma: no cover - depends on the install
    _C_ERROR = e

if _C is not None:
    from . import _fake  # noqa: F401  (fake/meta implementations for torch.compile)
# An extension with the one-call forward (sageattention::attn); older dev builds have only the steps.
_FUSED = _C is not None and hasattr(torch.ops.sageattention, "attn")


def extension_error() -> Optional[BaseException]:
    """Why ``sageattention._C`` could not be loaded, or None."""
    return _C_ERROR


_BUILD_INFO_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_info.json")


_BUILD_INFO_CACHE: dict = {}  # path -> contents: read once per process (the routing asks on every call)


def build_info() -> Optional[dict]:
    """Contents of sageattention/build_info.json (written by the build tool), or None in a dev tree."""
    path = _BUILD_INFO_PATH
    if path not in _BUILD_INFO_CACHE:
        try:
            with open(path) as f:
                _BUILD_INFO_CACHE[path] = json.load(f)
        except FileNotFoundError:
            return None
    return _BUILD_INFO_CACHE[path]


def _parse_arch(a) -> tuple:
    s = str(a).strip().lower().replace("sm_", "").replace("sm", "")
    if "." in s:
        major, minor = s.split(".", 1)
        return int(major), int(minor.rstrip("af") or 0)
    s = s.rstrip("af")
    return int(s[:-1]), int(s[-1])


def _arch_runs(wheel_arch, cap) -> bool:
    """Machine code for sm_XY runs on X.Z for Z >= Y (same major); an arch-specific
    target (sm_XYa, e.g. 9.0a) runs on exactly X.Y."""
    major, minor = _parse_arch(wheel_arch)
    if str(wheel_arch).strip().lower().endswith("a"):
        return (cap[0], cap[1]) == (major, minor)
    return cap[0] == major and cap[1] >= minor


def unsupported_arch_message(cap, archs, device_name: str = "this GPU") -> Optional[str]:
    """Error message when a wheel carrying ``archs`` cannot run on compute capability ``cap``; None if it can."""
    if any(_arch_runs(a, cap) for a in archs):
        return None
    return (
        f"sageattention: {device_name} is sm_{cap[0]}{cap[1]} (compute capability {cap[0]}.{cap[1]}), but this "
        f"sageattention build carries kernels only for compute capabilities {', '.join(str(a) for a in archs)}. "
        f"Install a wheel built for {cap[0]}.{cap[1]} or build from source."
    )


@torch.compiler.assume_constant_result
def _capability_code(index: int) -> int:
    major, minor = torch.cuda.get_device_capability(index)
    return major * 10 + minor


def _capability(index: int) -> tuple:
    code = _capability_code(index)
    return code // 10, code % 10


def _device_index(device: torch.device) -> int:
    return device.index if device.index is not None else torch.cuda.current_device()


def unsupported_reason(device: torch.device, need_fp8: bool = False) -> Optional[str]:
    """Why SageAttention cannot run on ``device`` (a CUDA device), or None when it can."""
    return _unsupported_reason(_device_index(device), need_fp8, _BUILD_INFO_PATH)


@functools.lru_cache(maxsize=None)
def _unsupported_reason(index: int, need_fp8: bool, info_path: str) -> Optional[str]:
    device = torch.device("cuda", index)
    if _C is None:
        return (f"sageattention: the CUDA extension sageattention._C could not be loaded ({type(_C_ERROR).__name__}: "
                f"{_C_ERROR}). Build it (kernels/tools/build_ext.py) or install a wheel.")
    cap = _capability(index)
    info = build_info()
    if info is not None and info.get("archs"):
        msg = unsupported_arch_message(cap, info["archs"], torch.cuda.get_device_name(device))
        if msg:
            return msg
    if cap < (8, 0):
        return f"sageattention: needs compute capability >= 8.0, this GPU is {cap[0]}.{cap[1]}"
    if need_fp8 and cap < (8, 9):
        return (f"sageattention: the FP8 P.V path needs compute capability >= 8.9 (mma e4m3); this GPU is "
                f"{cap[0]}.{cap[1]}. Use sageattn_qk_int8_pv_fp16_cuda.")
    return None


def _require_kernels(t, need_fp8: bool) -> None:
    if not isinstance(t, torch.Tensor) or t.device.type != "cuda" or torch.compiler.is_compiling():
        return  # CPU tensors get the device error from _prepare; meta/fake tensors trace
    msg = unsupported_reason(t.device, need_fp8)
    if msg:
        raise RuntimeError(msg)


def _default_path(t) -> str:
    """The P.V path sageattn runs on the tensor's GPU: FP8 from sm89 on (e4m3 MMA), FP16 before."""
    if not isinstance(t, torch.Tensor) or t.device.type not in ("cuda", "meta"):
        raise ValueError(f"sageattention: q must be a CUDA tensor, got {getattr(t, 'device', type(t).__name__)}")
    if t.device.type == "meta":
        return "fp8"
    code = _capability_code(_device_index(t.device))
    if code < 80:
        _require_kernels(t, need_fp8=False)  # raises with the arch message
        raise RuntimeError(f"sageattention: compute capability {code // 10}.{code % 10} is not supported (needs >= 8.0)")
    return "fp8" if code >= 89 else "fp16"


# ---- input preparation ---------------------------------------------------------------------------

def _check_tensors(names, tensors, rank, shape_text):
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


def _pad_and_align(tensors, d):
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


def _check_heads(hq, hk, d):
    if hq % hk != 0:
        raise ValueError(
            f"sageattention: the number of query heads ({hq}) must be a multiple of the number of "
            f"key/value heads ({hk}) (GQA)"
        )
    if d > 128:
        raise ValueError(f"sageattention: head_dim {d} is not supported (at most 128; 64 and 128 are native)")


def _prepare(q, k, v, tensor_layout):
    """Validate q/k/v; return (q, k, v, head_dim, q_len) with head_dim padded to a multiple of 8."""
    _args.check_choice("sageattention", "tensor_layout", tensor_layout, _LAYOUTS)
    layout_text = ("[batch, heads, seq, head_dim]" if tensor_layout == "HND" else "[batch, seq, heads, head_dim]") + \
        f" for tensor_layout={tensor_layout!r}"
    _check_tensors(("q", "k", "v"), (q, k, v), 4, layout_text)
    hd, sd = (1, 2) if tensor_layout == "HND" else (2, 1)
    if q.shape[0] != k.shape[0]:
        raise ValueError(f"sageattention: batch of q ({q.shape[0]}) and k ({k.shape[0]}) differ")
    if q.shape[3] != k.shape[3]:
        raise ValueError(f"sageattention: head_dim of q ({q.shape[3]}) and k ({k.shape[3]}) differ")
    d = q.shape[3]
    _check_heads(q.shape[hd], k.shape[hd], d)
    if min(q.shape[sd], k.shape[sd], q.shape[0], q.shape[hd], k.shape[hd], d) == 0:
        raise ValueError(f"sageattention: empty input, q {tuple(q.shape)}, k {tuple(k.shape)}")
    q, k, v = _pad_and_align((q, k, v), d)
    return q, k, v, d, q.shape[sd]


def _sm_scale(sm_scale, d):
    return float(sm_scale) if sm_scale is not None else 1.0 / math.sqrt(d)


def _mask_padding(mask, q, k, tensor_layout) -> Optional[KeyPadding]:
    """The key-padding mask ``mask`` as per-batch key ranges (None: attends every key); ValueError otherwise."""
    if mask is None:
        return None
    hd, sd = (1, 2) if tensor_layout == "HND" else (2, 1)
    if isinstance(mask, torch.Tensor) and mask.device != q.device:
        raise MaskError(f"is on {mask.device} but q is on {q.device}")
    return key_padding(mask, q.shape[0], q.shape[hd], q.shape[sd], k.shape[sd])


def _rows_per_batch(t, tensor_layout):
    """Rows of the seq axis between batch elements (what _absolute_starts counts in)."""
    sd = 2 if tensor_layout == "HND" else 1
    return t.stride(0) // t.stride(sd) if t.stride(sd) else None


def _absolute_starts(t, start, tensor_layout):
    """(t, starts): the sa_view seq_start of a dense tensor, rows counted from its data pointer (stride_batch unused)."""
    sd = 2 if tensor_layout == "HND" else 1
    ss, sb = t.stride(sd), t.stride(0)
    if ss == 0 or sb % ss != 0:
        t = t.contiguous()
        ss, sb = t.stride(sd), t.stride(0)
    per_batch = sb // ss
    if (t.shape[0] - 1) * per_batch + t.shape[sd] >= 2 ** 31:
        raise MaskError(f"left-pads a batch of shape {tuple(t.shape)}, too large for 32-bit row offsets")
    rows = torch.arange(t.shape[0], device=start.device, dtype=torch.int32) * per_batch
    return t, (rows + start).contiguous()


def _lse_correction(q, k, tensor_layout, sm_scale, valid=None):
    """The kernels see K - mean(K); the true LSE is larger by sm_scale * q . mean(K) per row.
    ``valid`` ([B, Nk] bool): the mean is over each batch element's attended keys."""
    hd, sd = (1, 2) if tensor_layout == "HND" else (2, 1)
    kf = k.float()
    if valid is None:
        km = kf.mean(dim=sd)  # [B, Hk, D]
    else:
        w = valid.float()
        w = w[:, None, :, None] if tensor_layout == "HND" else w[:, :, None, None]
        km = (kf * w).sum(dim=sd) / valid.sum(dim=1).float()[:, None, None]
    km = km.repeat_interleave(q.shape[hd] // k.shape[hd], dim=1)  # [B, Hq, D]
    qf = q.float() if tensor_layout == "HND" else q.float().transpose(1, 2)
    return torch.matmul(qf, km.unsqueeze(-1)).squeeze(-1) * sm_scale  # [B, Hq, Nq]


def _finish(o, lse, d, return_lse, q=None, k=None, tensor_layout="HND", smooth_k=False, sm_scale=1.0, valid=None):
    if o.shape[-1] != d:
        o = o[..., :d]
    if return_lse and smooth_k:
        lse = lse + _lse_correction(q, k, tensor_layout, sm_scale, valid)
    return (o, lse) if return_lse else o


# ---- the kernels: dense batches (optionally key-padded) ------------------------------------------

def _run_dense(path, q, k, v, tensor_layout, is_causal, gran, sm_scale, smooth_k, smooth_v, return_lse,
               kp: Optional[KeyPadding] = None):
    """q/k/v as _prepare returns them; kp: per-batch key ranges of a key-padding mask."""
    lay = _LAYOUTS[tensor_layout]
    d_pad = q.shape[3]
    q_len = q.shape[2] if tensor_layout == "HND" else q.shape[1]
    kv_len = k.shape[2] if tensor_layout == "HND" else k.shape[1]
    ops = torch.ops.sageattention
    g = _GRANULARITIES[gran]
    kv_n = kp.length if kp is not None else None
    k_start = None
    if kp is not None and kp.left:
        k, k_start = _absolute_starts(k, kp.start, tensor_layout)
    if _FUSED:  # the whole forward in one op: one dispatch, no Python between the kernels
        vv = v if path == "fp8" or v.dtype == torch.float16 else v.to(torch.float16)
        if kp is not None and kp.left:
            vv, _ = _absolute_starts(vv, kp.start, tensor_layout)
        if k_start is None or _rows_per_batch(vv, tensor_layout) == _rows_per_batch(k, tensor_layout):
            return ops.attn(q, k, vv, lay, bool(is_causal), g, sm_scale, bool(smooth_k), bool(smooth_v),
                            path == "fp8", bool(return_lse), k_start, kv_n)
    q_int8, q_scale = ops.quant_q(q, lay, g)
    k_int8, k_scale = ops.quant_k(k, lay, g, bool(smooth_k), k_start, kv_n)
    if path == "fp16":
        v16 = v if v.dtype == torch.float16 else v.to(torch.float16)
        v_start = None
        if kp is not None and kp.left:
            v16, v_start = _absolute_starts(v16, kp.start, tensor_layout)
        o, lse = ops.attn_pv_fp16(q_int8, q_scale, k_int8, k_scale, v16, lay, q_len, bool(is_causal), sm_scale,
                                  bool(return_lse), q.dtype, None, None, v_start, kv_n)
    else:
        v_start = None
        if kp is not None and kp.left:
            v, v_start = _absolute_starts(v, kp.start, tensor_layout)
        v_fp8, v_scale, v_mean = ops.quant_v_fp8(v, lay, bool(smooth_v), v_start, kv_n)
        o, lse = ops.attn_pv_fp8(q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean if smooth_v else None, lay,
                                 q_len, kv_len, d_pad, bool(is_causal), sm_scale, bool(return_lse), q.dtype, None,
                                 None, kv_n)
    return o, lse


def _attn_fp16(q, k, v, tensor_layout, is_causal, gran, sm_scale, smooth_k, return_lse, attn_mask=None):
    return _attend("fp16", q, k, v, tensor_layout, is_causal, gran, sm_scale, smooth_k, False, return_lse, attn_mask)


def _attn_fp8(q, k, v, tensor_layout, is_causal, gran, sm_scale, smooth_k, smooth_v, return_lse, attn_mask=None):
    return _attend("fp8", q, k, v, tensor_layout, is_causal, gran, sm_scale, smooth_k, smooth_v, return_lse, attn_mask)


def _attend(path, q, k, v, tensor_layout, is_causal, gran, sm_scale, smooth_k, smooth_v, return_lse, attn_mask=None,
            kp: Optional[KeyPadding] = None):
    q, k, v, d, _ = _prepare(q, k, v, tensor_layout)
    if attn_mask is not None:
        kp = _mask_padding(attn_mask, q, k, tensor_layout)
    scale = _sm_scale(sm_scale, d)
    o, lse = _run_dense(path, q, k, v, tensor_layout, is_causal, gran, scale, smooth_k, smooth_v, return_lse, kp)
    return _finish(o, lse, d, return_lse, q, k, tensor_layout, smooth_k, scale, kp.valid if kp is not None else None)


def _run_call(fn, call: _args.Call, opts: _args.Options):
    path = opts.pv or _default_path(call.q)
    _require_kernels(call.q, need_fp8=path == "fp8")
    return _attend(path, call.q, call.k, call.v, call.tensor_layout, call.is_causal, opts.gran, call.sm_scale,
                   opts.smooth_k, opts.smooth_v, call.return_lse, call.attn_mask)


# ---- public functions (upstream's names and signatures) ------------------------------------------

_SDPA_DOC = """
    SDPA's arguments are accepted too, so ``torch.nn.functional.scaled_dot_product_attention = {fn}``
    works for keyword calls: ``query``/``key``/``value`` (aliases of q/k/v), ``attn_mask``,
    ``dropout_p`` (must be 0: ValueError otherwise), ``scale`` (= sm_scale; both given and different:
    ValueError) and ``enable_gqa`` (GQA runs whenever q_heads % kv_heads == 0).  A fourth positional
    argument that is a tensor or None is SDPA's ``attn_mask``.

    attn_mask: key-padding masks run natively: bool (True = attend) or additive (0 = attend,
    <= -1000 such as -inf = masked), broadcastable to [batch, q_heads, q_len, kv_len] ([B, 1, 1, Nk]
    typically), the same keys for every head and query row, one contiguous range of attended keys
    per batch element (right or left padding).  Checking it costs one host synchronisation.  Any
    other mask, and attn_mask with is_causal=True, raise ValueError naming attn_mask: a mask is
    never ignored, so a caller's fallback to torch SDPA takes over.  See sageattention.masks.
    Causal masking is top-left aligned (query i sees keys j <= i), as SDPA's is_causal.
    Returns o (layout and dtype of q), and with return_lse=True also lse [B, Hq, Nq] (fp32, natural log).
"""


def sageattn_qk_int8_pv_fp16_cuda(q=None, k=None, v=None, tensor_layout="HND", is_causal=False,
                                  qk_quant_gran="per_thread", sm_scale=None, pv_accum_dtype="fp32", smooth_k=True,
                                  smooth_v=False, return_lse=False, **kwargs):
    call = _args.normalize("sageattn_qk_int8_pv_fp16_cuda", q, k, v, tensor_layout, is_causal, sm_scale, return_lse,
                           kwargs)
    opts = _args.options("sageattn_qk_int8_pv_fp16_cuda", call.options, "fp16",
                         dict(qk_quant_gran=qk_quant_gran, pv_accum_dtype=pv_accum_dtype, smooth_k=smooth_k,
                              smooth_v=smooth_v))
    return _run_call("sageattn_qk_int8_pv_fp16_cuda", call, opts)


sageattn_qk_int8_pv_fp16_cuda.__doc__ = """INT8 Q.K^T (per-block/warp/thread scales, K smoothed) and FP16 P.V with fp32 accumulation.

    Upstream's values run as: pv_accum_dtype "fp32", "fp16+fp32" and "fp16" all run fp32
    accumulation (at least as accurate); smooth_v is accepted and not needed with fp32
    accumulation; qk_quant_gran "per_block", "per_warp" or "per_thread".
""" + _SDPA_DOC.format(fn="sageattn_qk_int8_pv_fp16_cuda")


def sageattn_qk_int8_pv_fp8_cuda(q=None, k=None, v=None, tensor_layout="HND", is_causal=False,
                                 qk_quant_gran="per_thread", sm_scale=None, pv_accum_dtype="fp32+fp32", smooth_k=True,
                                 smooth_v=False, return_lse=False, **kwargs):
    call = _args.normalize("sageattn_qk_int8_pv_fp8_cuda", q, k, v, tensor_layout, is_causal, sm_scale, return_lse,
                           kwargs)
    opts = _args.options("sageattn_qk_int8_pv_fp8_cuda", call.options, "fp8",
                         dict(qk_quant_gran=qk_quant_gran, pv_accum_dtype=pv_accum_dtype, smooth_k=smooth_k,
                              smooth_v=smooth_v))
    return _run_call("sageattn_qk_int8_pv_fp8_cuda", call, opts)


_FP8_DOC = """INT8 Q.K^T and FP8 (e4m3) P.V: P scaled by 448, V per-channel scaled; two-level fp32 accumulation.

    Needs compute capability >= 8.9 (on 9.0 the wgmma kernels run when the build has them).
    Upstream's values run as: pv_accum_dtype "fp32+fp32", "fp32" and "fp32+fp16" all run the
    two-level fp32 accumulation (at least as accurate as upstream's "fp32", whose accumulator keeps
    22 bits, or its fp16 inner accumulator); smooth_v is honoured with every value (upstream
    ignores it except with "fp32"); qk_quant_gran "per_block", "per_warp" or "per_thread".
"""
sageattn_qk_int8_pv_fp8_cuda.__doc__ = _FP8_DOC + _SDPA_DOC.format(fn="sageattn_qk_int8_pv_fp8_cuda")


def sageattn_qk_int8_pv_fp8_cuda_sm90(q=None, k=None, v=None, tensor_layout="HND", is_causal=False,
                                      qk_quant_gran="per_thread", sm_scale=None, pv_accum_dtype="fp32+fp32",
                                      smooth_k=True, return_lse=False, **kwargs):
    call = _args.normalize("sageattn_qk_int8_pv_fp8_cuda_sm90", q, k, v, tensor_layout, is_causal, sm_scale,
                           return_lse, kwargs)
    opts = _args.options("sageattn_qk_int8_pv_fp8_cuda_sm90", call.options, "fp8",
                         dict(qk_quant_gran=qk_quant_gran, pv_accum_dtype=pv_accum_dtype, smooth_k=smooth_k))
    return _run_call("sageattn_qk_int8_pv_fp8_cuda_sm90", call, opts)


sageattn_qk_int8_pv_fp8_cuda_sm90.__doc__ = """The FP8 P.V path under upstream's Hopper name: the same function as sageattn_qk_int8_pv_fp8_cuda.

    On compute capability 9.0 the build's wgmma kernels run (sm_90a); unlike upstream it also
    runs on any other GPU of compute capability >= 8.9, and accepts pv_accum_dtype "fp32"
    (upstream raises NotImplementedError): it runs the two-level fp32 accumulation.
""" + _SDPA_DOC.format(fn="sageattn_qk_int8_pv_fp8_cuda_sm90")


def sageattn_qk_int8_pv_fp16_triton(q=None, k=None, v=None, tensor_layout="HND", quantization_backend="triton",
                                    is_causal=False, attn_mask=None, sm_scale=None, smooth_k=True, return_lse=False,
                                    **kwargs):
    kwargs = dict(kwargs, attn_mask=attn_mask)
    call = _args.normalize("sageattn_qk_int8_pv_fp16_triton", q, k, v, tensor_layout, is_causal, sm_scale,
                           return_lse, kwargs)
    opts = _args.options("sageattn_qk_int8_pv_fp16_triton", call.options, "fp16",
                         dict(qk_quant_gran="per_block", quantization_backend=quantization_backend,
                              smooth_k=smooth_k))
    return _run_call("sageattn_qk_int8_pv_fp16_triton", call, opts)


sageattn_qk_int8_pv_fp16_triton.__doc__ = """Upstream's Triton kernel's name and signature, run by the CUDA kernels.

    Per-block INT8 Q/K scales (128 query rows, 64 keys: upstream's Triton granularity; pass
    qk_quant_gran to choose another) and FP16 P.V with fp32 accumulation (at least as accurate as
    upstream's fp16 accumulator).  quantization_backend "triton" or "cuda": both run the CUDA
    quantization.  attn_mask: upstream applies any mask here; this build applies key-padding
    masks and raises ValueError for others (see below).
""" + _SDPA_DOC.format(fn="sageattn_qk_int8_pv_fp16_triton")


def sageattn(q=None, k=None, v=None, tensor_layout="HND", is_causal=False, sm_scale=None, return_lse=False,
             **kwargs):
    call = _args.normalize("sageattn", q, k, v, tensor_layout, is_causal, sm_scale, return_lse, kwargs,
                           sdpa_positional=True)
    opts = _args.options("sageattn", call.options, "any")
    return _run_call("sageattn", call, opts)


sageattn.__doc__ = """Quantized attention, picking the kernel for the GPU: sm80/sm86/sm87 -> FP16 P.V, sm89/sm90/sm120 -> FP8 P.V.

    q: [B, Hq, Nq, D] (HND) or [B, Nq, Hq, D] (NHD); k, v: same with Hk heads (Hq % Hk == 0), fp16 or bf16.
    Upstream's keyword options (qk_quant_gran, pv_accum_dtype of either path, smooth_k, smooth_v,
    qk_quant_dtype) go to the chosen path (upstream's sageattn drops them).  Positional calls in
    SDPA's order (q, k, v, attn_mask, dropout_p, is_causal) are recognised by the fourth argument
    being a tensor or None.
""" + _SDPA_DOC.format(fn="sageattn")


# ---- variable-length (packed) sequences ----------------------------------------------------------

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
                    max_seqlen_k=None, is_causal=False, sm_scale=None, smooth_k=True, **kwargs):
    """Attention over packed variable-length sequences (upstream's signature), one kernel launch per step.

    q: [total_q, Hq, D], k, v: [total_k, Hk, D] (fp16/bf16, CUDA, Hq % Hk == 0); cu_seqlens_q/_k:
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
    _check_tensors(("q", "k", "v"), (q, k, v), 3, "[total_tokens, heads, head_dim]")
    if q.shape[2] != k.shape[2]:
        raise ValueError(f"sageattention: head_dim of q ({q.shape[2]}) and k ({k.shape[2]}) differ")
    d = q.shape[2]
    _check_heads(q.shape[1], k.shape[1], d)
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
    _require_kernels(q, need_fp8=path == "fp8")
    q, k, v = _pad_and_align((q, k, v), d)
    scale = _sm_scale(call.sm_scale, d)
    ops = torch.ops.sageattention
    g = _GRANULARITIES[opts.gran]
    q_int8, q_scale = ops.quant_q(q, _PACKED, g, q_start, q_len, max_q)
    k_int8, k_scale = ops.quant_k(k, _PACKED, g, opts.smooth_k, k_start, k_len, max_k)
    if path == "fp16":
        v16 = v if v.dtype == torch.float16 else v.to(torch.float16)
        o, _ = ops.attn_pv_fp16(q_int8, q_scale, k_int8, k_scale, v16, _PACKED, max_q, call.is_causal, scale, False,
                                q.dtype, q_start, q_len, k_start, k_len, q.shape[0], max_k)
    else:
        v_fp8, v_scale, v_mean = ops.quant_v_fp8(v, _PACKED, opts.smooth_v, k_start, k_len, max_k)
        o, _ = ops.attn_pv_fp8(q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean if opts.smooth_v else None,
                               _PACKED, max_q, max_k, q.shape[2], call.is_causal, scale, False, q.dtype, q_start,
                               q_len, k_len, q.shape[0])
    return o[..., :d] if o.shape[-1] != d else o


# ---- torch SDPA's call, for patch_sdpa -----------------------------------------------------------

@dataclass
class SdpaPlan:
    """A torch SDPA call that SageAttention runs: HND tensors, the P.V path, the mask's key ranges."""

    path: str
    kp: Optional[KeyPadding]


def sdpa_plan(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """(plan, None) when SageAttention can run this SDPA call, else (None, why): the reason a call falls back."""
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
    if torch.is_grad_enabled() and any(t.requires_grad for t in ts):
        return None, "autograd (SageAttention has no backward)"
    if dropout_p:
        return None, "dropout_p > 0"
    d = query.shape[-1]
    if key.shape[-1] != d or value.shape[-1] != d:
        return None, "value head_dim differs from query's"
    if d > 128:
        return None, f"head_dim {d} > 128"
    if query.shape[0] != key.shape[0] or key.shape != value.shape:
        return None, "batch or key/value shapes differ (broadcast batch)"
    hq, hk = query.shape[1], key.shape[1]
    if hq != hk and not (enable_gqa and hq % hk == 0):
        return None, "q heads != kv heads without enable_gqa"
    if min(query.shape[2], key.shape[2], d) == 0:
        return None, "empty tensor"
    if attn_mask is not None and is_causal:
        return None, "attn_mask with is_causal"
    reason = unsupported_reason(query.device)
    if reason is not None:
        return None, "GPU or build not supported"
    path = _default_path(query)
    kp = None
    if attn_mask is not None:
        try:
            kp = _mask_padding(attn_mask, query, key, "HND")
        except MaskError as e:
            return None, "attn_mask " + e.reason
    return SdpaPlan(path, kp), None


def sdpa_run(plan: SdpaPlan, query, key, value, is_causal, scale):
    """Run an SDPA call that sdpa_plan accepted (HND layout, SDPA's default scale 1/sqrt(head_dim))."""
    return _attend(plan.path, query, key, value, "HND", bool(is_causal), "per_thread", scale, True, False, False,
                   None, plan.kp)
