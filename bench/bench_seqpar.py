#!/usr/bin/env python3
"""Sequence parallelism over several GPUs: yunchang's LongContextAttention with
SageAttention beside yunchang's torch backends, in the same run.

For each topology (Ulysses x Ring over --world GPUs), sequence length, head dim
and causal flag, the sharded forward of one attention layer (batch 1, --heads
heads, bf16) is timed for each attention type (the slowest rank's median of
--iters calls, CUDA events, after warm-up; all-to-all and ring communication
included) and compared with full attention on one GPU (torch SDPA over the
whole sequence):

  SAGE_AUTO     sageattention.sageattn per ring step (LSE-merged across the ring)
  TORCH_CUDNN   yunchang's cuDNN SDPA backend (the torch backend the issue names).
                yunchang 0.6.4 returns zeros for its LSE, so its ring merge is wrong
                with Ring > 1: the cosine column shows it.
  TORCH_FLASH   yunchang's flash SDPA backend (a real LSE, rounded to the input dtype)

Prints a Markdown table; its last columns are time ratios (above 1: the first type is faster).  The harness is tests/gpu/seqpar.py (also run by the
multi-GPU tests).  Launch: python3 bench/bench_seqpar.py [--world 2]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "gpu"))
import seqpar  # noqa: E402

TOPOLOGIES = {2: [(2, 1), (1, 2)], 4: [(2, 2), (4, 1), (1, 4)], 8: [(4, 2), (2, 4), (8, 1)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--world", type=int, default=2, choices=sorted(TOPOLOGIES))
    ap.add_argument("--seqs", type=int, nargs="+", default=[8192, 32768])
    ap.add_argument("--dims", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--heads", type=int, default=24)
    ap.add_argument("--dtype", choices=sorted(seqpar.DTYPES), default="bf16")
    ap.add_argument("--types", nargs="+", default=["SAGE_AUTO", "TORCH_CUDNN", "TORCH_FLASH"])
    ap.add_argument("--iters", type=int, default=10)
    a = ap.parse_args()
    cases = [seqpar.Case(u, r, t, a.dtype, d, n, c, heads=a.heads)
             for u, r in TOPOLOGIES[a.world] for n in a.seqs for d in a.dims for c in (False, True) for t in a.types]
    with tempfile.TemporaryDirectory() as tmp:
        records = seqpar.run(a.world, cases, os.path.join(tmp, "bench.json"), timing=True, iters=a.iters)
    import torch

    print(f"\n{torch.cuda.get_device_name(0)} x {a.world}, torch {torch.__version__}, batch 1, {a.heads} heads, "
          f"{a.dtype}; ms = the slowest rank's median forward; cos against full attention on one GPU\n")
    print("| Ulysses x Ring | N | D | causal | " + " | ".join(f"{t} ms | cos" for t in a.types) + " | "
          + " | ".join(f"{t} ms / {a.types[0]} ms" for t in a.types[1:]) + " |")
    print("|" + "---|" * (4 + 2 * len(a.types) + len(a.types) - 1))
    by_key = {r["key"]: r for r in records}
    for u, r in TOPOLOGIES[a.world]:
        for n in a.seqs:
            for d in a.dims:
                for c in (False, True):
                    recs = [by_key[seqpar.Case(u, r, t, a.dtype, d, n, c, heads=a.heads).key] for t in a.types]
                    cells = []
                    for rec in recs:
                        if rec["error"]:
                            cells += ["error: " + rec["error"].splitlines()[0][:60], "-"]
                        else:
                            cells += [f"{rec['ms']:.2f}", f"{rec['cos']:.5f}"]
                    base = None if recs[0]["error"] else recs[0]["ms"]
                    ratios = [f"{rec['ms'] / base:.2f}" if base and not rec["error"] else "-" for rec in recs[1:]]
                    print(f"| {u} x {r} | {n} | {d} | {'yes' if c else 'no'} | " + " | ".join(cells + ratios) + " |")


if __name__ == "__main__":
    main()
