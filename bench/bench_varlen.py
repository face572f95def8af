#!/usr/bin/env python3
"""Benchmark sageattn_varlen on packed variable-length sequences against torch SDPA.

A workload is a batch of self-attention sequences whose lengths are drawn
uniformly from [max_len / 8, max_len] (fixed seed) until --total tokens are
packed ([total, heads, head_dim], cu_seqlens).  Methods:

  sage_varlen       sageattn_varlen (FP16 P.V path), quantization included
  sage_varlen_fp8   sageattn_varlen with pv_accum_dtype="fp32+fp32" (FP8 P.V, sm89+)
  sage_mask         sageattn on the zero-padded batch with a key-padding mask
                    (the masked path: per-batch key lengths; one host sync to check the mask)
  sdpa_njt          torch SDPA on nested (jagged) tensors: torch dispatches them to its
                    flash / memory-efficient varlen kernels (cu_seqlens), i.e. flash varlen
  sdpa_loop         torch SDPA (its default backend choice: flash here) called once per sequence
  sdpa_mask         torch SDPA on the zero-padded batch with the same key-padding mask
                    (flash takes no mask: the memory-efficient kernel runs)

TOPS = sum over sequences of 4*H*n^2*D (halved when causal) / time: the useful
work, the same for every method.  CUDA-event timing as bench_attn.py (warm-up,
median of back-to-back calls).  Prints progress, then a Markdown table.
"""
import argparse
import os
import random
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import time_ms  # noqa: E402  (also puts the dev tree's python/ last on sys.path)

import sageattention as sa  # noqa: E402

METHODS = ("sage_varlen", "sage_varlen_fp8", "sage_mask", "sdpa_njt", "sdpa_loop", "sdpa_mask")


def draw_lengths(total, max_len, seed):
    rng = random.Random(seed)
    lens = []
    while sum(lens) < total:
        lens.append(rng.randint(max(1, max_len // 8), max_len))
    lens[-1] -= sum(lens) - total
    return [n for n in lens if n > 0]


def make_workload(lens, heads, d, dtype):
    total = sum(lens)
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(total, heads, d, generator=g, device="cuda", dtype=torch.float32).to(dtype)
               for _ in range(3))
    cu = torch.tensor([0] + lens, device="cuda").cumsum(0).to(torch.int32)
    return q, k, v, cu


def padded(x, lens, cu):
    """[B, H, max_len, D] zero-padded copy of packed x, and the [B, 1, 1, max_len] key-padding mask."""
    b, m = len(lens), max(lens)
    out = x.new_zeros(b, m, x.shape[1], x.shape[2])
    mask = torch.zeros(b, 1, 1, m, dtype=torch.bool, device=x.device)
    starts = cu.tolist()
    for i, n in enumerate(lens):
        out[i, :n] = x[starts[i]:starts[i] + n]
        mask[i, ..., :n] = True
    return out.transpose(1, 2), mask


def method_fn(name, q, k, v, cu, lens, causal):
    m = max(lens)
    if name == "sage_varlen":
        return lambda: sa.sageattn_varlen(q, k, v, cu, cu, m, m, is_causal=causal)
    if name == "sage_varlen_fp8":
        return lambda: sa.sageattn_varlen(q, k, v, cu, cu, m, m, is_causal=causal, pv_accum_dtype="fp32+fp32")
    if name in ("sage_mask", "sdpa_mask"):
        if causal:
            return None  # a key-padding mask with is_causal: SDPA refuses it, so does sageattn
        qp, mask = padded(q, lens, cu)
        kp, _ = padded(k, lens, cu)
        vp, _ = padded(v, lens, cu)
        if name == "sage_mask":
            return lambda: sa.sageattn(qp, kp, vp, attn_mask=mask)
        return lambda: F.scaled_dot_product_attention(qp, kp, vp, attn_mask=mask)
    if name == "sdpa_njt":
        offsets = cu.long()
        qn, kn, vn = (torch.nested.nested_tensor_from_jagged(t, offsets=offsets).transpose(1, 2) for t in (q, k, v))
        return lambda: F.scaled_dot_product_attention(qn, kn, vn, is_causal=causal)
    if name == "sdpa_loop":
        bounds = list(zip(cu.tolist()[:-1], cu.tolist()[1:]))
        seqs = [tuple(t[s:e].transpose(0, 1)[None] for t in (q, k, v)) for s, e in bounds]

        def loop():
            return [F.scaled_dot_product_attention(a, b_, c, is_causal=causal) for a, b_, c in seqs]
        return loop
    raise ValueError(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--total", type=int, default=32768, help="packed tokens per workload")
    ap.add_argument("--max-lens", default="512,2048,8192", help="longest sequence of each workload")
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "bf16"])
    args = ap.parse_args()
    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    methods = args.methods.split(",")
    cap = torch.cuda.get_device_capability()
    if cap < (8, 9):
        methods = [m for m in methods if m != "sage_varlen_fp8"]
    print(f"device: {torch.cuda.get_device_name()} (sm_{cap[0]}{cap[1]}), torch {torch.__version__}, "
          f"{args.total} tokens, H={args.heads} {args.dtype}", flush=True)
    rows = []
    for d in [int(x) for x in args.dims.split(",")]:
        for causal in [bool(int(x)) for x in args.causal.split(",")]:
            for max_len in [int(x) for x in args.max_lens.split(",")]:
                lens = draw_lengths(args.total, max_len, seed=max_len)
                q, k, v, cu = make_workload(lens, args.heads, d, dtype)
                flops = sum(4.0 * args.heads * n * n * d for n in lens) / (2 if causal else 1)
                res = {}
                for m in methods:
                    try:
                        fn = method_fn(m, q, k, v, cu, lens, causal)
                        res[m] = None if fn is None else flops / (time_ms(fn) * 1e-3) / 1e12
                    except Exception as e:  # report, keep going
                        res[m] = None
                        print(f"  {m} d={d} causal={causal} max_len={max_len}: {type(e).__name__}: {str(e)[:200]}",
                              flush=True)
                    torch.cuda.empty_cache()
                rows.append((d, causal, max_len, len(lens), res))
                print(f"  d={d} causal={int(causal)} max_len={max_len} ({len(lens)} seqs): " +
                      " ".join(f"{m}={res[m]:.0f}" if res[m] else f"{m}=-" for m in methods), flush=True)
                del q, k, v
                torch.cuda.empty_cache()
    print()
    print("| head dim | causal | max len | seqs | " + " | ".join(methods) + " |")
    print("|---|---|---|---|" + "---|" * len(methods))
    for d, causal, max_len, nseq, res in rows:
        print(f"| {d} | {int(causal)} | {max_len} | {nseq} | " +
              " | ".join(f"{res[m]:.0f}" if res[m] else "-" for m in methods) + " |")
    print(f"\n(TOPS of useful work; {args.total} packed tokens per row; '-': not applicable or failed, see above)")


if __name__ == "__main__":
    main()
