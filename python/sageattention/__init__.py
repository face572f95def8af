"""SageAttention: quantized attention (INT8 Q.K^T with K smoothing, FP8 or FP16 P.V).

Every name of upstream SageAttention's API, with torch SDPA's arguments accepted
too, and ``patch_sdpa()`` to route torch's scaled_dot_product_attention here
where it can run.  Importing this package loads the CUDA extension
``sageattention._C`` when it is available; its import registers
``torch.ops.sageattention.*``.
"""
from ._autograd import set_backward
from ._extension import build_info, extension_error
from .attention import (
    sageattn,
    sageattn_qk_int8_pv_fp16_cuda,
    sageattn_qk_int8_pv_fp16_triton,
    sageattn_qk_int8_pv_fp8_cuda,
    sageattn_qk_int8_pv_fp8_cuda_sm90,
)
from .varlen import sageattn_varlen
from .sdpa_patch import SdpaPatch, patch_sdpa

__all__ = [
    "sageattn",
    "sageattn_varlen",
    "sageattn_qk_int8_pv_fp16_cuda",
    "sageattn_qk_int8_pv_fp16_triton",
    "sageattn_qk_int8_pv_fp8_cuda",
    "sageattn_qk_int8_pv_fp8_cuda_sm90",
    "patch_sdpa",
    "set_backward",
    "SdpaPatch",
    "build_info",
    "extension_error",
]
