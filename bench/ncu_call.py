#!/usr/bin/env python3
"""Three calls of one shape, for ncu (--launch-skip 2 --launch-count 1):
    ncu_call.py PATH(sageattn|fp8|fp16) D N CAUSAL [B H]
PATH fp8 / fp16: the P.V path's own function; sageattn: what sageattn picks.
SA_NCU_UPSTREAM=FOLDER imports upstream's package from FOLDER instead of ours."""
import os
import sys

import torch

if os.environ.get("SA_NCU_UPSTREAM"):
    sys.path.insert(0, os.environ["SA_NCU_UPSTREAM"])
else:
    sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import sageattention as sa  # noqa: E402

path, d, n, causal = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), bool(int(sys.argv[4]))
b, h = (int(sys.argv[5]), int(sys.argv[6])) if len(sys.argv) > 6 else (4, 32)
q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
fn = {"fp8": sa.sageattn_qk_int8_pv_fp8_cuda, "fp16": sa.sageattn_qk_int8_pv_fp16_cuda, "sageattn": sa.sageattn}[path]
for _ in range(3):
    fn(q, k, v, is_causal=causal)
torch.cuda.synchronize()
