"""Python API of SageAttention: argument checking, dispatch by GPU arch."""
from __future__ import annotations

import json
import math
import os
from typing import Optional

import torch
import torch.nn.functional as F

_LAYOUTS = {"HND": 0, "NHD": 1}
_GRANULARITIES = {"per_block": 0, "per_warp": 1, "per_thread": 2}
# upstream SageAttention accepts these pv_accum_dtype values; this build
# implements the ones marked True.
_PV16_ACCUM = {"fp32": True, "fp16+fp32": False, "fp16": False}
_PV8_ACCUM = {"fp32+fp32": True, "fp32": False, "fp32+fp16": False}

_C = None
_C_ERROR: Optional[BaseException] = None
try:  # the import registers torch.ops.sageattention.*
    from . import _C  # type: ignore  # noqa: F401
except Exception as e:  # pragma: no cover - depends on the install
    _C_ERROR = e

if _C is not None:
    from . import _fake  # noqa: F401  (fake/meta implementations for torch.compile)


def extension_error() -> Optional[BaseException]:
    """Why ``sageattention._C`` could not be loaded, or None."""
    return _C_ERROR


_BUILD_INFO_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_info.json")


def build_info() -> Optional[dict]:
    """Contents of sageattention/build_info.json (written by the build tool), or None in a dev tree."""
    try:
        with open(_BUILD_INFO_PATH) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


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


def _require_kernels(device: torch.device, need_fp8: bool) -> tuple:
    if _C is None:
        raise RuntimeError(
            "sageattention: the CUDA extension sageattention._C could not be loaded "
            f"({type(_C_ERROR).__name__}: {_C_ERROR}). Build it (kernels/dev/build_ext.py) or install a wheel."
        )
    cap = _capability(_device_index(device))
    info = build_info()
    if info is not None and info.get("archs"):
        msg = unsupported_arch_message(cap, info["archs"], torch.cuda.get_device_name(device))
        if msg:
            raise RuntimeError(msg)
    if cap < (8, 0):
        raise RuntimeError(f"sageattention: needs compute capability >= 8.0, this GPU is {cap[0]}.{cap[1]}")
    if need_fp8 and cap < (8, 9):
        raise RuntimeError(
            f"sageattention: the FP8 P.V path needs compute capability >= 8.9 (mma e4m3); this GPU is "
            f"{cap[0]}.{cap[1]}. Use sageattn_qk_int8_pv_fp16_cuda."
        )
    return cap


def _check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"sageattention: {name} must be one of {sorted(allowed)}, got {value!r}")


def _prepare(q, k, v, tensor_layout):
    """Validate q/k/v; return (q, k, v, head_dim, q_len) with head_dim padded to a multiple of 8."""
    _check_choice("tensor_layout", tensor_layout, _LAYOUTS)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"sageattention: {name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(
                f"sageattention: {name} must be 4-D ({'[batch, heads, seq, head_dim]' if tensor_layout == 'HND' else '[batch, seq, heads, head_dim]'} "
                f"for tensor_layout={tensor_layout!r}), got shape {tuple(t.shape)}"
            )
        if t.dtype not in (torch.float16, torch.bfloat16):
            raise ValueError(f"sageattention: {name} must be float16 or bfloat16, got {t.dtype}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"sageattention: q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"sageattention: q, k, v must be on one device, got {q.device}, {k.device}, {v.device}")
    if q.device.type not in ("cuda", "meta"):
        raise ValueError(f"sageattention: q, k, v must be CUDA tensors, got device {q.device}")
    hd, sd = (1, 2) if tensor_layout == "HND" else (2, 1)
    if k.shape != v.shape:
        raise ValueError(f"sageattention: k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}")
    if q.shape[0] != k.shape[0]:
        raise ValueError(f"sageattention: batch of q ({q.shape[0]}) and k ({k.shape[0]}) differ")
    if q.shape[3] != k.shape[3]:
        raise ValueError(f"sageattention: head_dim of q ({q.shape[3]}) and k ({k.shape[3]}) differ")
    if q.shape[hd] % k.shape[hd] != 0:
        raise ValueError(
            f"sageattention: the number of query heads ({q.shape[hd]}) must be a multiple of the number of "
            f"key/value heads ({k.shape[hd]}) (GQA)"
        )
    d = q.shape[3]
    if d > 128:
        raise ValueError(f"sageattention: head_dim {d} is not supported (at most 128; 64 and 128 are native)")
    if min(q.shape[sd], k.shape[sd], q.shape[0], q.shape[hd], k.shape[hd], d) == 0:
        raise ValueError(f"sageattention: empty input, q {tuple(q.shape)}, k {tuple(k.shape)}")
    pad = (-d) % 8
    out = []
    for t in (q, k, v):
        if pad:
            t = F.pad(t, (0, pad))
        misaligned = t.device.type == "cuda" and not torch.compiler.is_compiling() and t.data_ptr() % 16 != 0
        if t.stride(-1) != 1 or any(s % 8 for s in t.stride()[:3]) or misaligned:
            t = t.contiguous()
        out.append(t)
    return out[0], out[1], out[2], d, q.shape[sd]


def _sm_scale(sm_scale, d):
    return float(sm_scale) if sm_scale is not None else 1.0 / math.sqrt(d)


def _lse_correction(q, k, tensor_layout, sm_scale):
    """The kernels see K - mean(K); the true LSE is larger by sm_scale * q . mean(K) per row."""
    hd, sd = (1, 2) if tensor_layout == "HND" else (2, 1)
    km = k.float().mean(dim=sd)  # [B, Hk, D]
    km = km.repeat_interleave(q.shape[hd] // k.shape[hd], dim=1)  # [B, Hq, D]
    qf = q.float() if tensor_layout == "HND" else q.float().transpose(1, 2)
    return torch.matmul(qf, km.unsqueeze(-1)).squeeze(-1) * sm_scale  # [B, Hq, Nq]


def _finish(o, lse, d, return_lse, q=None, k=None, tensor_layout="HND", smooth_k=False, sm_scale=1.0):
    if o.shape[-1] != d:
        o = o[..., :d]
    if return_lse and smooth_k:
        lse = lse + _lse_correction(q, k, tensor_layout, sm_scale)
    return (o, lse) if return_lse else o


def _attn_fp16(q, k, v, tensor_layout, is_causal, gran, sm_scale, smooth_k, return_lse):
    q, k, v, d, q_len = _prepare(q, k, v, tensor_layout)
    lay = _LAYOUTS[tensor_layout]
    ops = torch.ops.sageattention
    q_int8, q_scale = ops.quant_q(q, lay, _GRANULARITIES[gran])
    k_int8, k_scale = ops.quant_k(k, lay, _GRANULARITIES[gran], bool(smooth_k))
    v16 = v if v.dtype == torch.float16 else v.to(torch.float16)
    scale = _sm_scale(sm_scale, d)
    o, lse = ops.attn_pv_fp16(q_int8, q_scale, k_int8, k_scale, v16, lay, q_len, bool(is_causal),
                              scale, bool(return_lse), q.dtype)
    return _finish(o, lse, d, return_lse, q, k, tensor_layout, smooth_k, scale)


def _attn_fp8(q, k, v, tensor_layout, is_causal, gran, sm_scale, smooth_k, smooth_v, return_lse):
    q, k, v, d, q_len = _prepare(q, k, v, tensor_layout)
    lay = _LAYOUTS[tensor_layout]
    ops = torch.ops.sageattention
    q_int8, q_scale = ops.quant_q(q, lay, _GRANULARITIES[gran])
    k_int8, k_scale = ops.quant_k(k, lay, _GRANULARITIES[gran], bool(smooth_k))
    v_fp8, v_scale, v_mean = ops.quant_v_fp8(v, lay, bool(smooth_v))
    kv_len = k.shape[2] if tensor_layout == "HND" else k.shape[1]
    scale = _sm_scale(sm_scale, d)
    o, lse = ops.attn_pv_fp8(q_int8, q_scale, k_int8, k_scale, v_fp8, v_scale, v_mean if smooth_v else None, lay,
                             q_len, kv_len, v.shape[3], bool(is_causal), scale, bool(return_lse), q.dtype)
    return _finish(o, lse, d, return_lse, q, k, tensor_layout, smooth_k, scale)


def sageattn_qk_int8_pv_fp16_cuda(q, k, v, tensor_layout="HND", is_causal=False, qk_quant_gran="per_thread",
                                  sm_scale=None, pv_accum_dtype="fp32", smooth_k=True, return_lse=False, **kwargs):
    """INT8 Q.K^T (per-block/warp/thread scales, K smoothed) and FP16 P.V with fp32 accumulation.

    Causal masking is top-left aligned (query i sees keys j <= i), like torch SDPA's is_causal.
    Returns o (layout and dtype of q), and with return_lse=True also lse [B, Hq, Nq] (fp32, natural log).
    """
    _check_choice("tensor_layout", tensor_layout, _LAYOUTS)
    _check_choice("qk_quant_gran", qk_quant_gran, _GRANULARITIES)
    _check_choice("pv_accum_dtype", pv_accum_dtype, _PV16_ACCUM)
    if not _PV16_ACCUM[pv_accum_dtype]:
        raise ValueError(f"sageattention: pv_accum_dtype={pv_accum_dtype!r} is not implemented in this build; use 'fp32'")
    _reject_kwargs(kwargs)
    if isinstance(q, torch.Tensor) and q.device.type == "cuda" and not torch.compiler.is_compiling():
        _require_kernels(q.device, need_fp8=False)
    return _attn_fp16(q, k, v, tensor_layout, is_causal, qk_quant_gran, sm_scale, smooth_k, return_lse)


def sageattn_qk_int8_pv_fp8_cuda(q, k, v, tensor_layout="HND", is_causal=False, qk_quant_gran="per_thread",
                                 sm_scale=None, pv_accum_dtype="fp32+fp32", smooth_k=True, smooth_v=False,
                                 return_lse=False, **kwargs):
    """INT8 Q.K^T and FP8 (e4m3) P.V: P scaled by 448, V per-channel scaled; two-level fp32 accumulation.

    Needs compute capability >= 8.9.  Causal masking is top-left aligned like torch SDPA's is_causal.
    """
    _check_choice("tensor_layout", tensor_layout, _LAYOUTS)
    _check_choice("qk_quant_gran", qk_quant_gran, _GRANULARITIES)
    _check_choice("pv_accum_dtype", pv_accum_dtype, _PV8_ACCUM)
    if not _PV8_ACCUM[pv_accum_dtype]:
        raise ValueError(
            f"sageattention: pv_accum_dtype={pv_accum_dtype!r} is not implemented in this build; use 'fp32+fp32'"
        )
    _reject_kwargs(kwargs)
    if isinstance(q, torch.Tensor) and q.device.type == "cuda" and not torch.compiler.is_compiling():
        _require_kernels(q.device, need_fp8=True)
    return _attn_fp8(q, k, v, tensor_layout, is_causal, qk_quant_gran, sm_scale, smooth_k, smooth_v, return_lse)


_IGNORED_KWARGS = {"qk_quant_dtype"}  # upstream knobs with a single supported value


def _reject_kwargs(kwargs):
    for key, val in kwargs.items():
        if key == "qk_quant_dtype":
            if val != "int8":
                raise ValueError(f"sageattention: qk_quant_dtype must be 'int8', got {val!r}")
            continue
        raise TypeError(f"sageattention: unexpected keyword argument {key!r}")


def sageattn(q, k, v, tensor_layout="HND", is_causal=False, sm_scale=None, return_lse=False, **kwargs):
    """Quantized attention, picking the kernel for the GPU: sm80/sm86/sm87 -> FP16 P.V, sm89/sm90/sm120 -> FP8 P.V.

    q: [B, Hq, Nq, D] (HND) or [B, Nq, Hq, D] (NHD); k, v: same with Hk heads (Hq % Hk == 0), fp16 or bf16.
    Extra keyword arguments go to the chosen kernel function (e.g. qk_quant_gran, smooth_k).
    """
    _check_choice("tensor_layout", tensor_layout, _LAYOUTS)
    if not isinstance(q, torch.Tensor) or q.device.type != "cuda":
        raise ValueError(f"sageattention: q must be a CUDA tensor, got {getattr(q, 'device', type(q).__name__)}")
    code = _capability_code(_device_index(q.device))
    cap = (code // 10, code % 10)
    if code >= 89:
        return sageattn_qk_int8_pv_fp8_cuda(q, k, v, tensor_layout=tensor_layout, is_causal=is_causal,
                                            sm_scale=sm_scale, return_lse=return_lse, **kwargs)
    if code >= 80:
        return sageattn_qk_int8_pv_fp16_cuda(q, k, v, tensor_layout=tensor_layout, is_causal=is_causal,
                                             sm_scale=sm_scale, return_lse=return_lse, **kwargs)
    _require_kernels(q.device, need_fp8=False)  # raises with the arch message
    raise RuntimeError(f"sageattention: compute capability {cap[0]}.{cap[1]} is not supported (needs >= 8.0)")
