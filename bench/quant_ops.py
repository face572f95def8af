#!/usr/bin/env python3
"""The quantization ops one part at a time (quant_q, quant_k, quant_v_fp8): time and outputs.

Times each op, calls back to back (bench_attn.time_ms), and `quant_qkv`, the quantization of Q, K and V
together that every `sageattn` call runs, each beside the traffic it moves (input read once, quantized
output written once).  With --save FILE the outputs of every point (and quant_qkv's at the per-block and
per-warp granularities) go to FILE; with --against FILE they are compared with a saved run (another
build): Q and V (smooth_v off) must be bit-identical, K (smoothed: its channel sums are float atomics)
within one quantization step.  Two builds of the package are compared by running this once with each on
PYTHONPATH.

    python3 bench/quant_ops.py [--save a.pt | --against a.pt] [--seqs 1024,4096,16384] [--dims 64,128]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import sa, time_ms  # noqa: E402,F401  (sa: the package under test, imported there)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--dims", default="64,128,256")
    ap.add_argument("--seqs", default="1024,4096,16384")
    ap.add_argument("--save")
    ap.add_argument("--against")
    a = ap.parse_args()
    ops = torch.ops.sageattention
    b, h = a.batch, a.heads
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, package {sa.__file__}")
    print(f"B={b} H={h} fp16 HND, granularity per_thread, smooth_k on, smooth_v off; microseconds (GB/s)\n")
    print(f"{'D':>4} {'N':>6} | {'quant_q':>14} {'quant_k':>14} {'quant_v_fp8':>14} {'quant_qkv':>14}")
    saved = {}
    ref = torch.load(a.against) if a.against else None
    bad = 0

    def record(key, outputs):
        """Keep one point's outputs (float8 as float32, which torch.equal takes) and compare them with ref's."""
        nonlocal bad
        saved[key] = [(t.float() if t.dtype == torch.float8_e4m3fn else t).cpu() for t in outputs]
        if ref is not None:
            bad += compare(key, saved[key], ref[key])

    for d in [int(x) for x in a.dims.split(",")]:
        for n in [int(x) for x in a.seqs.split(",")]:
            g = torch.Generator(device="cuda").manual_seed(n * 1000 + d)
            q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
            k += torch.randn(1, 1, 1, d, device="cuda", dtype=torch.float16, generator=g) * 4  # a channel bias
            calls = {
                "quant_q": lambda: ops.quant_q(q, 0, 2),
                "quant_k": lambda: ops.quant_k(k, 0, 2, True),
                "quant_v_fp8": lambda: ops.quant_v_fp8(v, 0, False, None, None, 0, 448.0),
                "quant_qkv": lambda: ops.quant_qkv(q, k, v, 0, 2, True, False),
            }
            cells = []
            for name, fn in calls.items():
                moved = 3 * q.numel() * (3 if name == "quant_qkv" else 1)  # bytes: 2 read, 1 written an element
                ms = time_ms(fn, warmup=5, reps=50)
                cells.append(f"{ms * 1e3:7.1f} ({moved / ms / 1e6:4.0f})")
                record(f"{name}/{d}/{n}", fn())
            for g in (0, 1):
                record(f"quant_qkv-g{g}/{d}/{n}", ops.quant_qkv(q, k, v, 0, g, True, False))
            print(f"{d:>4} {n:>6} | {' '.join(f'{c:>14}' for c in cells)}")
    if a.save:
        torch.save(saved, a.save)
    if ref is not None:
        print(f"\noutputs against {a.against}: {'all match' if bad == 0 else f'{bad} differ'}")
        sys.exit(1 if bad else 0)


def compare(key, got, want):
    """0 when `got` matches `want` (bit-identical, or for K within one step of int8), else 1 (printed)."""
    for i, (x, y) in enumerate(zip(got, want)):
        if x.shape != y.shape or x.dtype != y.dtype:
            print(f"  {key}[{i}]: shape/dtype {tuple(x.shape)} {x.dtype} vs {tuple(y.shape)} {y.dtype}")
            return 1
        if torch.equal(x, y):
            continue
        if key.startswith("quant_k") or (key.startswith("quant_qkv") and i in (2, 3)):
            diff = (x.float() - y.float()).abs().max().item()
            rel = diff / max(y.float().abs().max().item(), 1e-30)
            if (x.dtype == torch.int8 and diff <= 1) or (x.dtype != torch.int8 and rel <= 1e-5):
                continue
        print(f"  {key}[{i}]: differs (max |diff| {(x.float() - y.float()).abs().max().item():.3g})")
        return 1
    return 0


if __name__ == "__main__":
    main()
