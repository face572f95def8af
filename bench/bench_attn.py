#!/usr/bin/env python3
"""Benchmark SageAttention against torch SDPA (flash and cuDNN backends).

TOPS = 4*B*H*N^2*D / time (halved when causal).  "e2e" times sageattn_*()
including the quantization kernels; "kernel" times only the attention op on
pre-quantized inputs.  CUDA-event timing, warm-up first, median of repeats.
Prints a Markdown table.
"""
import argparse
import statistics
import sys
import os

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# The dev tree comes last: an installed sageattention (or PYTHONPATH) wins.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import sageattention as sa  # noqa: E402


def time_ms(fn, warmup=3, reps=10, max_s=2.0):
    """Median of per-call CUDA-event times, calls issued back to back (the host runs
    ahead of the GPU, as it does in a model), so the GPU time of the call is measured
    and not the host's launch latency of its first kernel."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    est = max(s.elapsed_time(e) / 1e3, 1e-6)
    n = max(3, min(reps, int(max_s / est)))
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--seqs", default="1024,2048,4096,8192,16384,32768")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--methods", default="fp8_e2e,fp8_kernel,fp16_e2e,fp16_kernel,sdpa_flash,sdpa_cudnn")
    ap.add_argument("--dtype", default="fp16")
    args = ap.parse_args()
    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    methods = args.methods.split(",")
    cap = torch.cuda.get_device_capability()
    if cap < (8, 9):
        methods = [m for m in methods if not m.startswith("fp8")]
    b, h = args.batch, args.heads
    ops = torch.ops.sageattention
    rows = []
    print(f"device: {torch.cuda.get_device_name()} (sm_{cap[0]}{cap[1]}), torch {torch.__version__}, "
          f"B={b} H={h} {args.dtype}", flush=True)
    for d in [int(x) for x in args.dims.split(",")]:
        for causal in [bool(int(x)) for x in args.causal.split(",")]:
            for n in [int(x) for x in args.seqs.split(",")]:
                torch.manual_seed(0)
                q = torch.randn(b, h, n, d, device="cuda", dtype=dtype)
                k = torch.randn(b, h, n, d, device="cuda", dtype=dtype)
                v = torch.randn(b, h, n, d, device="cuda", dtype=dtype)
                flops = 4.0 * b * h * n * n * d / (2 if causal else 1)
                res = {}
                sm = d ** -0.5
                for m in methods:
                    try:
                        if m == "fp8_e2e":
                            fn = lambda: sa.sageattn_qk_int8_pv_fp8_cuda(q, k, v, is_causal=causal)  # noqa: E731
                        elif m == "fp16_e2e":
                            fn = lambda: sa.sageattn_qk_int8_pv_fp16_cuda(q, k, v, is_causal=causal)  # noqa: E731
                        elif m in ("fp8_kernel", "fp16_kernel"):
                            qi, qs = ops.quant_q(q, 0, 2)
                            ki, ks = ops.quant_k(k, 0, 2, True)
                            if m == "fp8_kernel":
                                vf, vs, _ = ops.quant_v_fp8(v, 0, False)
                                fn = lambda: ops.attn_pv_fp8(qi, qs, ki, ks, vf, vs, None, 0, n, n, d, causal, sm,  # noqa: E731
                                                             False, dtype)
                            else:
                                fn = lambda: ops.attn_pv_fp16(qi, qs, ki, ks, v, 0, n, causal, sm, False, dtype)  # noqa: E731
                        elif m == "sdpa_flash":
                            def fn():
                                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        elif m == "sdpa_cudnn":
                            def fn():
                                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        else:
                            raise ValueError(m)
                        ms = time_ms(fn)
                        res[m] = flops / (ms * 1e-3) / 1e12
                    except Exception as e:  # report, keep going
                        res[m] = None
                        print(f"  {m} d={d} causal={causal} n={n}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                rows.append((d, causal, n, res))
                print("  " + f"d={d} causal={int(causal)} n={n}: " +
                      " ".join(f"{m}={res[m]:.0f}" if res[m] else f"{m}=-" for m in methods), flush=True)
                del q, k, v
                torch.cuda.empty_cache()
    print()
    print("| head dim | causal | N | " + " | ".join(methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    for d, causal, n, res in rows:
        print(f"| {d} | {int(causal)} | {n} | " + " | ".join(f"{res[m]:.0f}" if res[m] else "-" for m in methods) + " |")
    print("\n(TOPS; e2e includes quantization; kernel = attention kernel only)")


if __name__ == "__main__":
    main()
