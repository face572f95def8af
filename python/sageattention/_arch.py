"""Which GPUs this build's kernels run on, and which kernel a call gets there.

A wheel lists its compute capabilities in build_info.json; machine code for
sm_XY runs on X.Z for Z >= Y, an arch-specific target (sm_XYa) on X.Y only.
Which kernel serves a call (compute capability, head dim, P.V path,
accumulator), and so the P.V path and accumulator a call gets when the caller
leaves them open, is the C routing table's answer (kernels/src/route_table.h):
asked through the extension's ``route`` op, or without the extension from
``_routes`` (the same table as data, generated from C).  The capability is read
once per device; both are constants under torch.compile.
"""
from __future__ import annotations

import collections
import functools
from typing import Optional

import torch

from . import _extension, _routes

# The row a call runs: kernel ('sm90_pv_fp8', ...), family ('pv_fp16', 'pv_fp8', 'sm90'), pv ('fp16' / 'fp8'),
# pv_accum_f16 (bool: V scaled to 2.25 for an f16 tile accumulator).
Route = collections.namedtuple("Route", "kernel family pv pv_accum_f16")
_PV_CODE = {name: code for code, name in _routes.PV.items()}


def _select(cc: int, head_dim: int, pv: int, acc: int, families: int):
    """The first row of _routes.ROWS matching the query among `families` (sa_route_in's rule), or None."""
    for row in _routes.ROWS:
        kernel, family, r_pv, r_acc, cc_min, cc_max, hd_min, hd_max = row
        if (pv in (_routes.ANY, r_pv) and acc in (_routes.ANY, r_acc) and cc_min <= cc <= cc_max
                and hd_min <= head_dim <= hd_max and families & family):
            return kernel, family, r_pv, r_acc
    return None


@torch.compiler.assume_constant_result
def _route_fields(cc: int, head_dim: int, pv: int, acc: int) -> tuple:
    return _route_cached(cc, head_dim, pv, acc)


@functools.lru_cache(maxsize=None)
def _route_cached(cc: int, head_dim: int, pv: int, acc: int) -> tuple:
    """(kernel, family, pv, pv_accum_f16, "") of the chosen row, or (0, 0, -1, -1, why) when none serves."""
    if _extension.loaded():  # the library's own table and families (linked in, SAGEATTN_SM90)
        try:
            return tuple(torch.ops.sageattention.route(cc, head_dim, pv, acc)) + ("",)
        except RuntimeError as e:
            return 0, 0, -1, -1, str(e).splitlines()[0]
    row = _select(cc, head_dim, pv, acc, _routes.ALL_FAMILIES)
    if row is not None:
        return row + ("",)
    what = "a call" if pv == _routes.ANY else f"the {_routes.PV[pv].upper()} P.V"
    return 0, 0, -1, -1, (f"sageattention: no kernel of the routing table (kernels/src/route_table.h) serves {what} "
                          f"on compute capability {cc // 10}.{cc % 10} at head_dim {head_dim}")


def route(code: int, head_dim: int, pv: Optional[str] = None, pv_accum_f16: Optional[bool] = None) -> Route:
    """The kernel that serves a call on compute capability ``code`` (major * 10 + minor) at ``head_dim``;
    ``pv`` ('fp16' / 'fp8') and ``pv_accum_f16`` None leave them to the table.  Raises RuntimeError with the
    table's reason when no kernel serves it."""
    acc = _routes.ANY if pv_accum_f16 is None else int(bool(pv_accum_f16))
    kernel, family, p, a, why = _route_fields(code, head_dim, _routes.ANY if pv is None else _PV_CODE[pv], acc)
    if kernel == 0:
        raise RuntimeError(why)
    return Route(_routes.KERNELS[kernel], _routes.FAMILIES[family], _routes.PV[p], bool(a))


def _routed_head_dim(t) -> int:
    """The head dim a call is routed by: the tensor's last dimension, within the table's range (a larger one
    is rejected by _tensors.validate with its own message, an empty tensor returns before any kernel)."""
    d = int(t.shape[-1]) if t.dim() > 0 else 1
    return min(max(d, 1), _routes.MAX_HEAD_DIM)


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


def unsupported_reason(device: torch.device, need_fp8: bool = False, head_dim: Optional[int] = None) -> Optional[str]:
    """Why SageAttention cannot run on ``device`` (a CUDA device), or None when it can: the FP8 P.V path with
    ``need_fp8``; at ``head_dim``, or at some head dim when None."""
    return _unsupported_reason(_device_index(device), need_fp8, head_dim, _extension.BUILD_INFO_PATH)


@functools.lru_cache(maxsize=None)
def _unsupported_reason(index: int, need_fp8: bool, head_dim: Optional[int], info_path: str) -> Optional[str]:
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
    code = _capability_code(index)
    why = None
    for d in (head_dim,) if head_dim is not None else range(8, _routes.MAX_HEAD_DIM + 1, 8):
        try:
            route(code, d, "fp8" if need_fp8 else None)
            return None
        except RuntimeError as e:
            why = why or str(e)
    if need_fp8:
        why += " Use sageattn_qk_int8_pv_fp16_cuda."
    return why if why.startswith("sageattention") else "sageattention: " + why


def require_kernels(t, need_fp8: bool) -> None:
    """Raise RuntimeError when the kernels cannot run on ``t``'s GPU (CPU, meta and traced tensors pass)."""
    if not isinstance(t, torch.Tensor) or t.device.type != "cuda" or torch.compiler.is_compiling():
        return  # CPU tensors get the device error from _tensors.prepare; meta/fake tensors trace
    msg = unsupported_reason(t.device, need_fp8, _routed_head_dim(t))
    if msg:
        raise RuntimeError(msg)


def default_accum_f16(t) -> bool:
    """Whether sageattn accumulates the FP8 P.V's key tiles in fp16 on the tensor's GPU (the routing table's
    first FP8 row there: sm89 and sm12x, whose FP8 MMA runs twice as fast into fp16, as upstream's sageattn)."""
    if t.device.type != "cuda":
        return False
    return accum_f16_for(_capability_code(_device_index(t.device)), _routed_head_dim(t))


def accum_f16_for(code: int, head_dim: int = 128) -> bool:
    """The accumulator the routing table gives the FP8 P.V on compute capability ``code`` (False where it has
    no FP8 kernel)."""
    try:
        return route(code, head_dim, "fp8").pv_accum_f16
    except RuntimeError:
        return False


_CALL_DEFAULTS: dict = {}  # (device index, routed head dim) -> (default_path, default_accum_f16)


def call_defaults(t) -> tuple:
    """(default_path(t), default_accum_f16(t)), kept per CUDA device and head dim: the routing table's answer
    does not change within a process (its queries are cached), so a call asks it once."""
    if not isinstance(t, torch.Tensor) or t.device.type != "cuda" or torch.compiler.is_compiling():
        return default_path(t), default_accum_f16(t)
    key = (t.device.index, _routed_head_dim(t))
    got = _CALL_DEFAULTS.get(key)
    if got is None:
        got = _CALL_DEFAULTS[key] = (default_path(t), default_accum_f16(t))
    return got


def default_path(t) -> str:
    """The P.V path sageattn runs on the tensor's GPU: the routing table's first row for its compute capability
    and head dim (FP8 from sm89 on; on sm90 above head dim 128 FP16, where the wgmma FP16 P.V is the fast one)."""
    if not isinstance(t, torch.Tensor) or t.device.type not in ("cuda", "meta"):
        raise ValueError(f"sageattention: q must be a CUDA tensor, got {getattr(t, 'device', type(t).__name__)}")
    if t.device.type == "meta":
        return "fp8"
    code = _capability_code(_device_index(t.device))
    try:
        return route(code, _routed_head_dim(t)).pv
    except RuntimeError as e:
        require_kernels(t, need_fp8=False)  # raises with the arch message where that is the reason
        raise RuntimeError(str(e)) from None
