#!/usr/bin/env python3
"""Where the time of one end-to-end sageattn call goes: per-kernel CUDA time
(torch.profiler) and the wall time of the call, for the fp8 and fp16 paths.
    python3 bench/profile_e2e.py [--seq 2048] [--dim 128]
"""
import argparse
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import sageattention as sa  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    a = ap.parse_args()
    q, k, v = (torch.randn(a.batch, a.heads, a.seq, a.dim, device="cuda", dtype=torch.float16) for _ in range(3))
    for name, fn in (("fp8", sa.sageattn_qk_int8_pv_fp8_cuda), ("fp16", sa.sageattn_qk_int8_pv_fp16_cuda)):
        for _ in range(5):
            fn(q, k, v)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
            for _ in range(10):
                fn(q, k, v)
            torch.cuda.synchronize()
        print(f"== {name} path, B={a.batch} H={a.heads} N={a.seq} D={a.dim}: per call (mean of 10)")
        rows = []
        for e in prof.key_averages():
            dev_us = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
            if dev_us and e.key and not e.key.startswith("aten::") and "sageattention::" not in e.key:
                rows.append((dev_us / 10, e.count // 10, e.key[:90]))
        for us, n, key in sorted(rows, reverse=True)[:12]:
            print(f"  {us:9.1f} us  x{n}  {key}")
        s, e_ = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(20):
            fn(q, k, v)
        e_.record()
        e_.synchronize()
        print(f"  e2e {s.elapsed_time(e_) / 20 * 1000:.1f} us per call (events, 20 back to back)")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            fn(q, k, v)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        print(f"  host {(t1 - t0) / 20 * 1e6:.1f} us per call to issue (no sync in the loop)")
        kernels = sum(us for us, n, key in rows)
        print(f"  GPU kernels {kernels:.1f} us per call in all")


if __name__ == "__main__":
    main()
