#!/usr/bin/env python3
"""Is a short call bound by the host or by the GPU?  For `sageattn`, torch SDPA (its default backend) and
SDPA patched by `patch_sdpa` (route auto: the router sends the call where it runs faster), at each point
three figures, µs:

- `e2e`: bench_attn.time_ms, the method every speed table uses (CUDA events around calls issued back to
  back): the GPU's time per call, or the host's where the host cannot keep ahead;
- `host`: the host's own time per call (the least of 9 rounds of 50 calls), measured while the GPU is kept
  busy by a long matmul queued first (so the host never waits on the GPU): Python, argument checks,
  allocations, launches;
- `gpu`: the GPU's time per call alone, replaying 20 calls captured in a CUDA graph (no host in between).

Where `host` is above `gpu`, calls issued back to back leave the GPU idle and `e2e` follows the host.

    python3 bench/host_vs_gpu.py [--seqs 1024,2048] [--dims 64,128]
    python3 bench/host_vs_gpu.py --profile [--dims 64 --seqs 1024]

--profile: where the host's time of a `sageattn` call goes instead: cProfile of 200 calls (GPU held busy),
the functions by own time, and the `attn` op's time alone (the C++ binding: checks, allocations, launches).
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import sa, time_ms  # noqa: E402  (sa: the package under test, imported there)


def host_us(fn, calls=50, rounds=9):
    """The host's time per call, the GPU held busy throughout: the least of `rounds` rounds (whatever else
    the host does meanwhile only adds to a round; on the H200 machine rounds of one process varied up to 2x)."""
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    out = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        for _ in range(6):  # a few ms of GPU work queued ahead of the calls
            big @ big
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t) / calls * 1e6)
        torch.cuda.synchronize()
    return min(out)


def gpu_us(fn, calls=20, reps=10):
    """The GPU's time per call: `calls` calls captured in one CUDA graph, replayed."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / calls)
    return statistics.median(times)


def profile(fn, op_fn, calls=200):
    """cProfile of `calls` calls of fn, the GPU held busy; then the host time of op_fn (the bare op) alone."""
    import cProfile
    import pstats

    for _ in range(5):
        fn()
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    for _ in range(20):
        big @ big
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(calls):
        fn()
    pr.disable()
    torch.cuda.synchronize()
    st = pstats.Stats(pr)
    st.sort_stats("tottime").print_stats(25)
    print(f"host per call: sageattn {host_us(fn):.1f} us, the attn op alone {host_us(op_fn):.1f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--seqs", default="1024,2048")
    ap.add_argument("--methods", default="ours,sdpa,patched", help="of ours, sdpa, patched")
    ap.add_argument("--profile", action="store_true", help="where a sageattn call's host time goes")
    a = ap.parse_args()
    if a.profile:
        for d in [int(x) for x in a.dims.split(",")]:
            n = int(a.seqs.split(",")[0])
            q, k, v = (torch.randn(a.batch, a.heads, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
            print(f"## head dim {d}, N {n}, B={a.batch} H={a.heads} fp16, device {torch.cuda.get_device_name()}")
            op = torch.ops.sageattention.attn
            profile(lambda: sa.sageattn(q, k, v), lambda: op(q, k, v, 0, False, 2, d ** -0.5, True, False, True,
                                                              False, None, None, False))
        return
    sdpa = F.scaled_dot_product_attention
    sa.patch_sdpa(route="auto")  # "patched": the router, sending each call where it runs faster
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, package {sa.__file__}")
    print(f"B={a.batch} H={a.heads} fp16 HND; microseconds per call\n")
    print("| head dim | causal | N | method | e2e | host | gpu |\n|---|---|---|---|---|---|---|")
    for d in [int(x) for x in a.dims.split(",")]:
        for causal in (False, True):
            for n in [int(x) for x in a.seqs.split(",")]:
                q, k, v = (torch.randn(a.batch, a.heads, n, d, device="cuda", dtype=torch.float16) for _ in range(3))

                methods = {
                    "ours": lambda: sa.sageattn(q, k, v, is_causal=causal),
                    "sdpa": lambda: sdpa(q, k, v, is_causal=causal),  # torch's own, its default backend
                    "patched": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                }
                for name, fn in ((m, methods[m]) for m in a.methods.split(",")):
                    e2e = time_ms(fn, reps=50) * 1e3
                    print(f"| {d} | {int(causal)} | {n} | {name} | {e2e:.1f} | {host_us(fn):.1f} | {gpu_us(fn):.1f} |",
                          flush=True)


if __name__ == "__main__":
    main()
