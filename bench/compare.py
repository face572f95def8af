#!/usr/bin/env python3
"""SageAttention (ours) side by side with upstream SageAttention and torch SDPA, in one run.

For every point: ours (`sageattention.sageattn`, the installed wheel or the dev
tree), upstream's `sageattn` (loaded from a folder holding upstream's Python
package with its compiled extensions, under another module name so both live in
one process), and `torch.nn.functional.scaled_dot_product_attention` under the
cuDNN and flash backends (and the default backend for the model shapes).
Every method is timed the same way: end to end (quantization included), calls
issued back to back as a model issues them, a CUDA event pair around each call,
median (bench_attn.time_ms).  TOPS = 4*B*Hq*Nq*Nk*D / time, halved when causal.

    python3 bench/compare.py --upstream anchor/src [--tables d128,causal,d64,d64c,d256,d256c,models]
        [--ours sageattn|fp16|fp8] [--seqs 1024,...] [--json out.json]

--ours fp16 / fp8 times the P.V path's own function (and upstream's of the same
name); with SAGEATTN_SM90=0 on an H100 those are the mma.sync kernels.

Prints Markdown tables with the ratio of ours to upstream and to cuDNN per point,
and a cosine check of every method's output against SDPA at each point.
"""
import argparse
import importlib.util
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import time_ms  # noqa: E402

# The dev tree comes last: an installed sageattention (or PYTHONPATH) wins.
sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import sageattention as ours  # noqa: E402


def load_upstream(folder):
    """upstream's package `sageattention` from folder/sageattention, imported as `upstream_sageattention`."""
    pkg = os.path.join(folder, "sageattention")
    spec = importlib.util.spec_from_file_location(
        "upstream_sageattention", os.path.join(pkg, "__init__.py"), submodule_search_locations=[pkg])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["upstream_sageattention"] = mod
    spec.loader.exec_module(mod)
    return mod


def sdpa(backend):
    def run(q, k, v, causal, layout):
        if layout == "NHD":
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        gqa = q.shape[1] != k.shape[1]
        if backend is None:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
        else:
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
        return o.transpose(1, 2) if layout == "NHD" else o
    return run


def cosine(a, b):
    a, b = a.float().flatten(), b.float().flatten()
    return torch.nn.functional.cosine_similarity(a, b, dim=0).item()


TABLES = {
    "d128": dict(title="head dim 128, non-causal", d=128, causal=False),
    "causal": dict(title="head dim 128, causal", d=128, causal=True),
    "d64": dict(title="head dim 64, non-causal", d=64, causal=False),
    "d64c": dict(title="head dim 64, causal", d=64, causal=True),
    "d256": dict(title="head dim 256, non-causal", d=256, causal=False),
    "d256c": dict(title="head dim 256, causal", d=256, causal=True),
}
OURS = {  # --ours: the function timed as "ours"
    "sageattn": "sageattn",
    "fp16": "sageattn_qk_int8_pv_fp16_cuda",
    "fp8": "sageattn_qk_int8_pv_fp8_cuda",
}
SEQS = (1024, 2048, 4096, 8192, 16384, 32768)  # the tables' sequence lengths
MODELS = [  # name, B, Hq, Hk, N, D, causal, layout (bf16, time per call)
    ("Flux 1024px", 1, 24, 24, 4608, 128, False, "HND"),
    ("Wan2.1-14B 720p", 1, 40, 40, 32760, 128, False, "NHD"),
    ("LLM prefill (GQA 32/8)", 1, 32, 8, 8192, 128, True, "HND"),
]


def make_qkv(b, hq, hk, n, d, layout, dtype):
    """A point's inputs: randn, seed 0, in the given layout."""
    torch.manual_seed(0)
    shape = (lambda h: (b, h, n, d)) if layout == "HND" else (lambda h: (b, n, h, d))
    q = torch.randn(shape(hq), device="cuda", dtype=dtype)
    k = torch.randn(shape(hk), device="cuda", dtype=dtype)
    v = torch.randn(shape(hk), device="cuda", dtype=dtype)
    return q, k, v


def measure(methods, b, hq, hk, n, d, causal, layout, dtype):
    q, k, v = make_qkv(b, hq, hk, n, d, layout, dtype)
    ref = sdpa(None)(q, k, v, causal, layout)
    res = {}
    for name, fn in methods.items():
        try:
            out = fn(q, k, v, causal, layout)
            cos = cosine(out, ref)
            ms = time_ms(lambda: fn(q, k, v, causal, layout))
            res[name] = dict(ms=ms, cos=cos)
        except Exception as e:  # report, keep going
            res[name] = dict(error=f"{type(e).__name__}: {str(e)[:160]}")
    del q, k, v, ref
    torch.cuda.empty_cache()
    return res


def tops(b, hq, n, d, causal, ms):
    return 4.0 * b * hq * n * n * d / (2 if causal else 1) / (ms * 1e-3) / 1e12


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", help="folder holding upstream's sageattention package with its extensions")
    ap.add_argument("--tables", default="d128,causal,d64,models")
    ap.add_argument("--seqs", default=",".join(str(n) for n in SEQS))
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--ours", choices=sorted(OURS), default="sageattn",
                    help="our function to time (fp16 / fp8: the P.V path's own function; with SAGEATTN_SM90=0 "
                         "on an H100, the mma.sync kernels); upstream runs the function of the same name")
    ap.add_argument("--json")
    args = ap.parse_args()
    fn_name = OURS[args.ours]
    ours_fn = getattr(ours, fn_name)
    methods = {"ours": lambda q, k, v, c, lay: ours_fn(q, k, v, tensor_layout=lay, is_causal=c)}
    if args.upstream:
        up = load_upstream(args.upstream)
        up_fn = getattr(up, fn_name)
        methods["upstream"] = lambda q, k, v, c, lay: up_fn(q, k, v, tensor_layout=lay, is_causal=c)
    methods["cudnn"] = sdpa(SDPBackend.CUDNN_ATTENTION)
    methods["flash"] = sdpa(SDPBackend.FLASH_ATTENTION)
    cap = torch.cuda.get_device_capability()
    print(f"device: {torch.cuda.get_device_name()} (sm_{cap[0]}{cap[1]}), torch {torch.__version__}, "
          f"ours from {os.path.dirname(ours.__file__)} ({fn_name}, SAGEATTN_SM90={os.environ.get('SAGEATTN_SM90', '')})",
          flush=True)
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "tables": {}, "models": []}
    names = list(methods)
    for key in args.tables.split(","):
        if key == "models":
            continue
        t = TABLES[key]
        rows = []
        for n in [int(x) for x in args.seqs.split(",")]:
            r = measure(methods, args.batch, args.heads, args.heads, n, t["d"], t["causal"], "HND", torch.float16)
            rows.append((n, r))
            print(f"  {key} N={n}: " + " ".join(
                f"{m}={tops(args.batch, args.heads, n, t['d'], t['causal'], r[m]['ms']):.0f}"
                f"(cos {r[m]['cos']:.4f})" if "ms" in r[m] else f"{m}=ERR {r[m]['error']}" for m in names), flush=True)
        out["tables"][key] = [(n, r) for n, r in rows]
        print(f"\n**{t['title']}** (B={args.batch}, H={args.heads}, fp16, TOPS end to end)\n")
        print("| method | " + " | ".join(f"{n // 1024}k" for n, _ in rows) + " |")
        print("|---|" + "---|" * len(rows))
        for m in names:
            cells = [f"{tops(args.batch, args.heads, n, t['d'], t['causal'], r[m]['ms']):.0f}" if "ms" in r[m] else "err"
                     for n, r in rows]
            print(f"| {m} | " + " | ".join(cells) + " |")
        for other in ("upstream", "cudnn"):
            if other in names:
                cells = [f"{r[other]['ms'] / r['ours']['ms']:.2f}x" if "ms" in r["ours"] and "ms" in r[other] else "-"
                         for n, r in rows]
                print(f"| ours / {other} | " + " | ".join(cells) + " |")
        print(flush=True)
    if "models" in args.tables.split(","):
        methods_m = dict(methods)
        methods_m["sdpa default"] = sdpa(None)
        names_m = list(methods_m)
        print("\n**model shapes** (bf16, ms per call; cosine vs SDPA)\n")
        print("| shape | " + " | ".join(names_m) + " |")
        print("|---|" + "---|" * len(names_m))
        for name, b, hq, hk, n, d, causal, lay in MODELS:
            r = measure(methods_m, b, hq, hk, n, d, causal, lay, torch.bfloat16)
            out["models"].append((name, r))
            cells = [f"{r[m]['ms']:.3f} ({r[m]['cos']:.4f})" if "ms" in r[m] else "err: " + r[m]["error"][:60]
                     for m in names_m]
            print(f"| {name}: B{b} H{hq}/{hk} N{n} D{d}{' causal' if causal else ''} {lay} | " + " | ".join(cells) + " |",
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
