#!/usr/bin/env python3
"""The one-call op against the separate ops, and both against float64, for one
test case of tests/gpu/test_attention.py (ONE_CALL_CASES[1]): max |LSE| differences."""
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
from gpu_helpers import make_qkv  # noqa: E402
import sageattention  # noqa: E402,F401
from sageattention import reference as ref  # noqa: E402

ops = torch.ops.sageattention
for d, layout, hq, hk, nq, nk, causal in ((64, "NHD", 8, 2, 333, 4096, True), (128, "HND", 4, 4, 1000, 1000, False)):
    q, k, v = make_qkv("kbias", b=2, hq=hq, hk=hk, nq=nq, nk=nk, d=d, dtype=torch.bfloat16, layout=layout,
                       seed=nq + nk)
    lay = 0 if layout == "HND" else 1
    scale = d ** -0.5
    o1, l1 = ops.attn(q, k, v, lay, causal, 2, scale, True, True, True, True, None, None)
    qi, qs = ops.quant_q(q, lay, 2)
    ki, ks = ops.quant_k(k, lay, 2, True, None, None)
    vf, vs, vm = ops.quant_v_fp8(v, lay, True, None, None)
    o2, l2 = ops.attn_pv_fp8(qi, qs, ki, ks, vf, vs, vm, lay, nq, nk, d, causal, scale, True, torch.bfloat16,
                             None, None, None)
    _, lr = ref.attention_fp64(q, k, v, tensor_layout=layout, is_causal=causal, sm_scale=scale, return_lse=True)
    print(f"D={d} {layout} causal={causal}: |l1-l2| max {(l1 - l2).abs().max().item():.2e}; "
          f"|l1-ref| max {(l1.double() - lr).abs().max().item():.2e} mean {(l1.double() - lr).abs().mean().item():.2e}; "
          f"|l2-ref| max {(l2.double() - lr).abs().max().item():.2e}; q scale max {qs.max().item():.3e} "
          f"k scale max {ks.max().item():.3e}")
