"""Small-shape run of every kernel for compute-sanitizer (memcheck, racecheck): both P.V paths, the
fp16 tile accumulator, head dims 64-256; 200 keys, so that every ring slot of the mma.sync kernels
is refilled at least once (4 key tiles through 2 or 3 stages); and the quantization ops one part at a
time (quant_q, quant_k, quant_v_fp8: sa_quant_qkv with the other parts left out).  SAGEATTN_SM90=0 on an H100 runs the
mma.sync kernels."""
import os
import sys

import torch

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import sageattention as sa  # noqa: E402

torch.manual_seed(0)
for d in (64, 128, 192, 256):
    for causal in (False, True):
        for layout in ("HND", "NHD"):
            shp_q = (1, 4, 130, d) if layout == "HND" else (1, 130, 4, d)
            shp_k = (1, 2, 200, d) if layout == "HND" else (1, 200, 2, d)
            q = torch.randn(shp_q, device="cuda", dtype=torch.float16)
            k = torch.randn(shp_k, device="cuda", dtype=torch.float16)
            v = torch.randn(shp_k, device="cuda", dtype=torch.float16)
            for gran in ("per_block", "per_thread"):
                o1, l1 = sa.sageattn_qk_int8_pv_fp16_cuda(q, k, v, tensor_layout=layout, is_causal=causal,
                                                          qk_quant_gran=gran, return_lse=True)
                o2, l2 = sa.sageattn_qk_int8_pv_fp8_cuda(q, k, v, tensor_layout=layout, is_causal=causal,
                                                         qk_quant_gran=gran, smooth_v=True, return_lse=True)
                o3 = sa.sageattn_qk_int8_pv_fp8_cuda(q, k, v, tensor_layout=layout, is_causal=causal,
                                                     qk_quant_gran=gran, pv_accum_dtype="fp32+fp16")
                assert torch.isfinite(o1).all() and torch.isfinite(o2).all() and torch.isfinite(o3).all()
            lay = 0 if layout == "HND" else 1
            ops = torch.ops.sageattention
            for g in (0, 1, 2):
                qi, qs = ops.quant_q(q, lay, g)
                ki, ks = ops.quant_k(k, lay, g, g != 1)
                assert torch.isfinite(qs).all() and torch.isfinite(ks).all()
            vf, vs, vm = ops.quant_v_fp8(v, lay, causal, None, None, 0, 448.0)
            assert torch.isfinite(vs).all() and torch.isfinite(vm).all()
torch.cuda.synchronize()
print("sanitize_small: ok")
