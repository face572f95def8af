#!/usr/bin/env python3
"""Quick correctness of both paths against SDPA (fp64 reference is the GPU test
suite's job): every head dim / causal / GQA / odd-length combination once.
Exits 1 on a NaN or a cosine under 0.995.  For checking a variant in seconds."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))
import sageattention as sa  # noqa: E402

bad = 0
for path in ("fp8", "fp16"):
    fn = sa.sageattn_qk_int8_pv_fp8_cuda if path == "fp8" else sa.sageattn_qk_int8_pv_fp16_cuda
    for d in (64, 128, 80):
        for causal in (False, True):
            for (b, hq, hk, nq, nk) in ((2, 8, 2, 1000, 1000), (1, 4, 4, 77, 3001), (1, 2, 2, 4096, 4096)):
                torch.manual_seed(0)
                q = torch.randn(b, hq, nq, d, device="cuda", dtype=torch.float16)
                k = torch.randn(b, hk, nk, d, device="cuda", dtype=torch.float16)
                v = torch.randn(b, hk, nk, d, device="cuda", dtype=torch.float16)
                o = fn(q, k, v, is_causal=causal)
                r = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hk)
                cos = F.cosine_similarity(o.float().flatten(), r.float().flatten(), dim=0).item()
                ok = torch.isfinite(o).all().item() and cos >= 0.995
                bad += not ok
                if not ok or os.environ.get("SMOKE_VERBOSE"):
                    print(f"{'ok ' if ok else 'BAD'} {path} d={d} causal={int(causal)} b{b} h{hq}/{hk} nq{nq} nk{nk}: cos {cos:.5f}",
                          flush=True)
torch.cuda.synchronize()
print(f"smoke ({os.path.dirname(sa.__file__)}): {'all ok' if not bad else f'{bad} BAD'}")
sys.exit(1 if bad else 0)
