#!/usr/bin/env python3
"""Would a one-pass call keep today's accuracy?  The numbers behind the design of issue 39's item 1.

Today a call reads K and V twice before the attention kernel runs: once for statistics over the
whole sequence (K's channel mean, which smoothing subtracts; V's channel range, which sets its e4m3
scale), once to quantize.  A kernel that quantized K and V as it loads them could not wait for
those statistics.  This script measures, in the PyTorch emulation of our kernels
(sageattention.reference: the same INT8 Q/K groups, online softmax per key tile, e4m3 P), what two
replacements, and a third, do to the output's error against exact fp64 attention:

- K's mean from a prefix of the keys (the first tile or two, which every query tile loads first)
  instead of all keys.  Subtracting any vector from every key shifts each query's scores by one
  constant, which softmax removes: the result is exact either way, only the INT8 error changes.
- V's e4m3 scale per key tile and channel (each tile's own range) instead of per channel over the
  whole sequence; the kernel would multiply each tile's P.V by its tile's scales before adding it
  to the output accumulator.
- K smoothed per 64-key tile by the tile's own mean.  That shifts each query's scores in a tile by
  q.mean(tile), which differs between tiles, so the kernel adds it back to the tile's scores (from
  the dequantized Q, in fp32: D multiply-adds per query and tile beside the tile's 64*D).  Exact as
  well, and it follows keys whose distribution changes along the sequence.

Inputs: the GPU suite's (randn, a large per-channel K bias, a sharp softmax) and two that a
prefix can mislead on: keys whose first 333 tokens (a text prompt before image tokens, as in
Flux and HunyuanVideo) carry another bias than the rest, and V with rare large tokens.

    python3 bench/onepass_numerics.py [--seqs 1024,4096] [--dims 64,128] [--heads 4] [--json out.json]
        [--kernels] [--upstream anchor/src]

Prints one Markdown table per head dim: cosine and relative L1 of each scheme against fp64, the
targets being cos >= 0.9992 and rel-L1 <= 0.04 (tests/gpu/test_attention.py).  --kernels adds the
real calls on the same inputs: our installed `sageattn` (what the emulation's first row models)
and, with --upstream, upstream SageAttention's `sageattn` (bench/compare.py loads it).
"""
import argparse
import json
import math
import os
import sys

import torch

# The dev tree comes last: an installed sageattention (or PYTHONPATH) wins, as in bench/compare.py.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from sageattention import reference as ref  # noqa: E402


def quantize_k(k, mean_keys):
    """INT8 K as the kernels quantize it (per-thread groups of a 64-key tile), smoothed by the channel mean of
    the first ``mean_keys`` keys (None: all of them; "tile": each 64-key tile by its own mean).  Returns
    (values as float, per-key scale, the mean subtracted from each key [B,H,N,D])."""
    b, h, n, d = k.shape
    x = k.float()
    if mean_keys == "tile":
        n_pad = ref._round_up(n, ref.BLOCK_K)
        xp = torch.zeros(b, h, n_pad, d, device=k.device)
        xp[:, :, :n] = x
        count = torch.zeros(b, h, n_pad, 1, device=k.device)
        count[:, :, :n] = 1.0
        tiles = lambda t: t.view(b, h, n_pad // ref.BLOCK_K, ref.BLOCK_K, -1)  # noqa: E731
        mean = (tiles(xp).sum(3, keepdim=True) / tiles(count).sum(3, keepdim=True).clamp(min=1.0))
        mean = mean.expand(-1, -1, -1, ref.BLOCK_K, -1).reshape(b, h, n_pad, d)[:, :, :n]
    else:
        mean = x[:, :, :mean_keys].mean(dim=2, keepdim=True) if mean_keys else x.mean(dim=2, keepdim=True)
        mean = mean.expand(b, h, n, d)
    ki, _, krow = ref.quantize_k(x - mean, "per_thread", smooth_k=False)
    return ki, krow, mean


def quantize_v(v, tile):
    """e4m3 V scaled per channel to +-448: over the whole sequence (tile None) or per key tile of ``tile`` keys.
    Returns (values as float64 [B,H,Npad,Dp], scale [B,H,tiles,Dp])."""
    b, h, n, d = v.shape
    dp = ref._padded_head_dim(d)
    span = n if tile is None else tile
    n_pad = ref._round_up(n, span)
    x = torch.zeros(b, h, n_pad, dp, device=v.device)
    x[:, :, :n, :d] = v.float()
    t = x.view(b, h, n_pad // span, span, dp)
    amax = t.abs().amax(dim=3)  # [B,H,tiles,Dp]
    inv = torch.where(amax > 0, ref.FP8_MAX / amax, torch.zeros_like(amax))
    vq = (t * inv[:, :, :, None, :]).clamp_(-ref.FP8_MAX, ref.FP8_MAX).to(torch.float8_e4m3fn).double()
    return vq.view(b, h, n_pad, dp), amax / ref.FP8_MAX


def attention(q, k, v, mean_keys=None, v_tile=None, block_k=128):
    """The fp8 P.V path of the emulation with the two choices above; non-causal, HND, Hq == Hk."""
    b, h, nq, d = q.shape
    nk = k.shape[2]
    dp = ref._padded_head_dim(d)
    scale = 1.0 / math.sqrt(d)
    qi, _, qrow = ref.quantize_q(q, "per_thread")
    ki, krow, kmean = quantize_k(k, mean_keys)
    nk_pad = ki.shape[2]
    s = torch.matmul(qi.double(), ki.double().transpose(-1, -2)).float()
    s = s * ((qrow * scale * ref.LOG2E)[..., :, None] * krow[..., None, :])
    if mean_keys == "tile":  # each tile's own mean shifts its scores by q.mean: add it back (fp32, dequantized Q)
        qd = (qi * qrow[..., None])[:, :, :, :d]
        corr = torch.matmul(qd, kmean.transpose(-1, -2)) * (scale * ref.LOG2E)
        s[..., :nk] += corr
    s[..., nk:] = float("-inf")
    vq, vs = quantize_v(v, v_tile)
    vv = torch.zeros(b, h, nk_pad, dp, dtype=torch.float64, device=q.device)
    rows = min(vq.shape[2], nk_pad)
    vv[:, :, :rows] = vq[:, :, :rows]
    off = ref.LOG2_FP8_MAX
    m = torch.full(s.shape[:-1], float("-inf"), device=q.device)
    l = torch.zeros_like(m)
    o = torch.zeros(*s.shape[:-1], dp, dtype=torch.float64, device=q.device)
    for t0 in range(0, nk_pad, block_k):
        st = s[..., t0:t0 + block_k]
        mx = torch.maximum(m, st.amax(-1))
        corr = torch.exp2(m - mx)
        m = mx
        p = torch.exp2(st - (mx - off)[..., None])
        pq = p.clamp(max=ref.FP8_MAX).to(torch.float8_e4m3fn).double()
        l = l * corr + pq.sum(-1).float()
        part = torch.matmul(pq, vv[:, :, t0:t0 + block_k])
        if v_tile is not None:  # each key tile's P.V times its tile's channel scales (v_tile divides block_k)
            per = block_k // v_tile
            part = torch.zeros_like(part)
            for j in range(per):
                a0 = t0 + j * v_tile
                if a0 >= nk_pad:
                    break
                part += torch.matmul(pq[..., j * v_tile:(j + 1) * v_tile], vv[:, :, a0:a0 + v_tile]) * \
                    vs[:, :, a0 // v_tile, None, :].double()
        o = o * corr[..., None].double() + part
    o = o / l[..., None].double()
    if v_tile is None:
        o = o * vs[:, :, 0, None, :].double()
    return o[:, :, :nq, :d]


def make_inputs(kind, h, n, d, seed, dev):
    g = torch.Generator(device=dev).manual_seed(seed)
    q, k, v = (torch.randn(1, h, n, d, generator=g, device=dev) for _ in range(3))
    if kind == "kbias":
        k = k + 8.0 * torch.randn(d, generator=g, device=dev)
    elif kind == "sharp":
        q = q * 3.0
    elif kind == "prefix_shift":  # 333 prompt tokens, then image tokens with another channel bias
        k = k + 8.0 * torch.randn(d, generator=g, device=dev)
        k[:, :, 333:] += 8.0 * torch.randn(d, generator=g, device=dev)
    elif kind == "v_outliers":  # one token in 512 carries 30x the magnitude in V
        hot = torch.rand(1, h, n, 1, generator=g, device=dev) < 1 / 512
        v = torch.where(hot, v * 30.0, v)
    return q.half(), k.half(), v.half()


def metrics(o, r):
    o, r = o.double().flatten(), r.double().flatten()
    cos = torch.nn.functional.cosine_similarity(o, r, dim=0).item()
    return cos, ((o - r).abs().sum() / r.abs().sum()).item()


SCHEMES = [  # (label, mean_keys, v_tile)
    ("today: K mean of all keys, V scale per channel", None, None),
    ("K mean of the first 128 keys", 128, None),
    ("K mean of the first 256 keys", 256, None),
    ("V scale per 128-key tile", None, 128),
    ("V scale per 64-key tile", None, 64),
    ("both: K mean of 128 keys, V per 128-key tile", 128, 128),
    ("K mean per 64-key tile, q.mean added back to its scores", "tile", None),
    ("K mean per 64-key tile + V per 128-key tile", "tile", 128),
]
KINDS = ["randn", "kbias", "sharp", "prefix_shift", "v_outliers"]


def kernel_schemes(a):
    """(label, function(q, k, v)) of the real calls --kernels asks for."""
    out = []
    if a.kernels:
        import sageattention as ours
        out.append(("ours: sageattn (the kernel)", lambda q, k, v: ours.sageattn(q, k, v, tensor_layout="HND")))
    if a.upstream:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from compare import load_upstream
        up = load_upstream(a.upstream)
        out.append(("upstream SageAttention 2.2: sageattn", lambda q, k, v: up.sageattn(q, k, v, tensor_layout="HND")))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seqs", default="1024,4096")
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--kernels", action="store_true", help="also run our installed sageattn on the same inputs")
    ap.add_argument("--upstream", help="upstream's source folder (anchor/src): also run its sageattn")
    ap.add_argument("--json")
    a = ap.parse_args()
    results = []
    real = kernel_schemes(a)
    labels = [label for label, _, _ in SCHEMES] + [label for label, _ in real]
    for d in (int(x) for x in a.dims.split(",")):
        print(f"\n### head dim {d}, B1 H{a.heads}, fp16 inputs: cos / rel-L1 against fp64 (worst over N in {a.seqs})\n")
        print("| scheme | " + " | ".join(KINDS) + " |")
        print("|---|" + "---|" * len(KINDS))
        worst = {label: {} for label in labels}
        for n in (int(x) for x in a.seqs.split(",")):
            for kind in KINDS:
                q, k, v = make_inputs(kind, a.heads, n, d, n + d, a.device)
                r = ref.attention_fp64(q, k, v)
                for label, mk, vt in SCHEMES:
                    cos, l1 = metrics(attention(q, k, v, mk, vt), r)
                    results.append({"d": d, "n": n, "kind": kind, "scheme": label, "cos": cos, "l1": l1})
                    c0, l0 = worst[label].get(kind, (1.0, 0.0))
                    worst[label][kind] = (min(c0, cos), max(l0, l1))
                for label, fn in real:
                    cos, l1 = metrics(fn(q, k, v), r)
                    results.append({"d": d, "n": n, "kind": kind, "scheme": label, "cos": cos, "l1": l1})
                    c0, l0 = worst[label].get(kind, (1.0, 0.0))
                    worst[label][kind] = (min(c0, cos), max(l0, l1))
                del q, k, v, r
                if a.device == "cuda":
                    torch.cuda.empty_cache()
        for label in labels:
            cells = [f"{worst[label][k][0]:.5f} / {worst[label][k][1]:.4f}" for k in KINDS]
            print(f"| {label} | " + " | ".join(cells) + " |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name() if a.device == "cuda" else a.device, "torch": torch.__version__, "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
