"""Which GPUs this build's kernels run on, and which P.V path a GPU gets.

A wheel lists its compute capabilities in build_info.json; machine code for
sm_XY runs on X.Z for Z >= Y, an arch-specific target (sm_XYa) on X.Y only.
The FP8 P.V path needs 8.9 (mma e4m3).  The capability is read once per device
and is a constant under torch.compile.
"""
from __future__ import annotations

import functools
from typing import Optional

import torch

from . import _extension


def _parse_arch(a) -> tuple:
    s = str(a).strip().lower().replace("sm_", "").replace("sm", "")
    if "." in s:
        major, minor = s.split(".", 1)
        return int(major), int(minor.rstrip("af") or 0)
    s = s.rstrip("af")
    return int(s[:-1]), int(s[-1])


def arch_runs(wheel_arch, cap) -> bool:
    """Machine code for sm_XY runs on X.Z for Z >= Y (same major); an arch-specific
    target (sm_XYa, e.g. 9.0a) runs on exactly X.Y."""
    major, minor = _parse_arch(wheel_arch)
    if str(wheel_arch).strip().lower().endswith("a"):
        return (cap[0], cap[1]) == (major, minor)
    return cap[0] == major and cap[1] >= minor


def unsupported_arch_message(cap, archs, device_name: str = "this GPU") -> Optional[str]:
    """Error message when a wheel carrying ``archs`` cannot run on compute capability ``cap``; None if it can."""
    if any(arch_runs(a, cap) for a in archs):
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
    return _unsupported_reason(_device_index(device), need_fp8, _extension.BUILD_INFO_PATH)


@functools.lru_cache(maxsize=None)
def _unsupported_reason(index: int, need_fp8: bool, info_path: str) -> Optional[str]:
    device = torch.device("cuda", index)
    if not _extension.loaded():
        err = _extension.extension_error()
        return (f"sageattention: the CUDA extension sageattention._C could not be loaded ({type(err).__name__}: "
                f"{err}). Build it (kernels/tools/build_ext.py) or install a wheel.")
    cap = _capability(index)
    info = _extension.build_info()
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


def require_kernels(t, need_fp8: bool) -> None:
    """Raise RuntimeError when the kernels cannot run on ``t``'s GPU (CPU, meta and traced tensors pass)."""
    if not isinstance(t, torch.Tensor) or t.device.type != "cuda" or torch.compiler.is_compiling():
        return  # CPU tensors get the device error from _tensors.prepare; meta/fake tensors trace
    msg = unsupported_reason(t.device, need_fp8)
    if msg:
        raise RuntimeError(msg)


def default_accum_f16(t) -> bool:
    """Whether sageattn accumulates the FP8 P.V's key tiles in fp16 on the tensor's GPU, as upstream's sageattn
    does: on sm89 and sm12x, whose FP8 MMA runs twice as fast with an fp16 accumulator."""
    if t.device.type != "cuda":
        return False
    return accum_f16_for(_capability_code(_device_index(t.device)))


def accum_f16_for(code: int) -> bool:
    return code == 89 or 120 <= code < 130


def default_path(t) -> str:
    """The P.V path sageattn runs on the tensor's GPU: FP8 from sm89 on (e4m3 MMA), FP16 before; on sm90
    above head_dim 128, FP16: the wgmma kernels' FP8 P.V stops at 128 and the mma.sync one's e4m3 MMA is
    emulated there, so the wgmma FP16 P.V is the fast one."""
    if not isinstance(t, torch.Tensor) or t.device.type not in ("cuda", "meta"):
        raise ValueError(f"sageattention: q must be a CUDA tensor, got {getattr(t, 'device', type(t).__name__)}")
    if t.device.type == "meta":
        return "fp8"
    code = _capability_code(_device_index(t.device))
    if code < 80:
        require_kernels(t, need_fp8=False)  # raises with the arch message
        raise RuntimeError(f"sageattention: compute capability {code // 10}.{code % 10} is not supported (needs >= 8.0)")
    if code == 90 and t.dim() > 0 and t.shape[-1] > 128:
        return "fp16"
    return "fp8" if code >= 89 else "fp16"
