#!/usr/bin/env python3
"""Where a work tile's time goes in the sm90 kernel, from a SA90_TRACE=1 build
(consumer.cuh records, per consumer warpgroup and work tile: CTA, warpgroup,
round, key tiles, and SM clock stamps at the start, after Q landed, after the
key loop and after the epilogue's stores were issued).

    PYTHONPATH=.devcarry/v_trace python3 kernels/dev/trace_sm90.py B H N D [causal] > trace.txt
    python3 kernels/dev/trace_sm90.py --analyze trace.txt MHZ

The traced process makes two calls and writes the second one's records.
Clock stamps are per SM, so only intervals inside one CTA are compared."""
import sys
from collections import defaultdict


def run(b, h, n, d, causal):
    import torch
    import sageattention as sa

    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(b, h, n, d, generator=g, device="cuda").half() for _ in range(3))
    import ctypes

    import importlib

    lib = ctypes.CDLL(importlib.import_module("sageattention._C").__file__)
    take = lib.sa90_trace_take
    take.argtypes = [ctypes.c_void_p, ctypes.c_int]
    cap = 1 << 17
    buf = (ctypes.c_ulonglong * (8 * cap))()
    for _ in range(2):
        take(buf, cap)  # drop the warm-up call's records
        sa.sageattn(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
    n = take(buf, cap)
    for i in range(n):
        print("SA90T", *buf[8 * i:8 * i + 8])


def analyze(path, mhz):
    last = {}
    for line in open(path):
        f = line.split()
        if len(f) != 9 or f[0] != "SA90T":
            continue
        cta, wg, rnd, nt, t0, tq, tl, te = map(int, f[1:])
        last[(cta, wg, rnd)] = (nt, t0, tq, tl, te)
    us = lambda c: c / mhz
    per_cta = defaultdict(list)
    for (cta, wg, rnd), r in last.items():
        per_cta[(cta, wg)].append((rnd,) + r)
    qw = lp = ep = gap = span = tiles = 0.0
    n_work = 0
    for rows in per_cta.values():
        rows.sort()
        span += rows[-1][5] - rows[0][2]
        for i, (rnd, nt, t0, tq, tl, te) in enumerate(rows):
            qw += tq - t0
            lp += tl - tq
            ep += te - tl
            tiles += nt
            n_work += 1
            if i:
                gap += t0 - rows[i - 1][5]
    k = len(per_cta)
    print(f"{n_work} work tiles over {k} consumer warpgroups, {tiles / n_work:.1f} key tiles each; "
          f"SM clock {mhz:.0f} MHz")
    print(f"per warpgroup: span {us(span / k):.1f} us = Q waits {us(qw / k):.1f} + key loops {us(lp / k):.1f} "
          f"+ epilogues {us(ep / k):.1f} + between tiles {us(gap / k):.1f}")
    print(f"per work tile: Q wait {us(qw / n_work):.2f} us, loop {us(lp / n_work):.2f} us "
          f"({us(lp / tiles) * 1000:.0f} ns per key tile), epilogue {us(ep / n_work):.2f} us")
    by_round = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for (cta, wg, rnd), (nt, t0, tq, tl, te) in last.items():
        a = by_round[rnd]
        a[0] += 1
        a[1] += tq - t0
        a[2] += (tl - tq) / max(nt, 1)
        a[3] += te - tl
    print("round: count, Q wait us, loop ns per key tile, epilogue us")
    for rnd in sorted(by_round)[:12]:
        c, a, l, e = by_round[rnd]
        print(f"  {rnd:3d}: {c:4d} {us(a / c):7.2f} {us(l / c) * 1000:7.0f} {us(e / c):7.2f}")


if __name__ == "__main__":
    if sys.argv[1] == "--analyze":
        analyze(sys.argv[2], float(sys.argv[3]))
    else:
        b, h, n, d = map(int, sys.argv[1:5])
        run(b, h, n, d, len(sys.argv) > 5 and sys.argv[5] == "causal")
