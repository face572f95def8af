"""Former home of the Python API, kept so ``from sageattention.core import ...`` still works.

The API now lives in modules named for what they do: ``attention`` (the dense
functions), ``varlen``, ``_sdpa_plan`` (patch_sdpa's routing), ``_dispatch``,
``_tensors``, ``_arch`` and ``_extension``.
"""
from ._arch import unsupported_arch_message, unsupported_reason
from ._extension import build_info, extension_error
from .attention import (
    sageattn,
    sageattn_qk_int8_pv_fp16_cuda,
    sageattn_qk_int8_pv_fp16_triton,
    sageattn_qk_int8_pv_fp8_cuda,
    sageattn_qk_int8_pv_fp8_cuda_sm90,
)
from ._sdpa_plan import SdpaPlan, sdpa_plan, sdpa_run
from .varlen import sageattn_varlen

__all__ = [
    "sageattn",
    "sageattn_varlen",
    "sageattn_qk_int8_pv_fp16_cuda",
    "sageattn_qk_int8_pv_fp16_triton",
    "sageattn_qk_int8_pv_fp8_cuda",
    "sageattn_qk_int8_pv_fp8_cuda_sm90",
    "build_info",
    "extension_error",
    "unsupported_reason",
    "unsupported_arch_message",
    "SdpaPlan",
    "sdpa_plan",
    "sdpa_run",
]
