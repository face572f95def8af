"""SageAttention: quantized attention (INT8 Q.K^T with K smoothing, FP8 or FP16 P.V).

Importing this package loads the CUDA extension ``sageattention._C`` when it is
available; its import registers ``torch.ops.sageattention.*``.
"""
from .core import (
    build_info,
    extension_error,
    sageattn,
    sageattn_qk_int8_pv_fp16_cuda,
    sageattn_qk_int8_pv_fp8_cuda,
)

__all__ = [
    "sageattn",
    "sageattn_qk_int8_pv_fp16_cuda",
    "sageattn_qk_int8_pv_fp8_cuda",
    "build_info",
    "extension_error",
]
