#!/usr/bin/env python3
"""Can any quantization pass ahead of the attention kernel leave a short call ahead of cuDNN?

A design that quantizes Q, K and V in a pass of its own before the attention kernel must at least
read them (fp16, 2 bytes an element) and write them back (1 byte), however well it is fused.  This
times, per point, calls back to back (bench_attn.time_ms):

- cudnn:   torch SDPA on the cuDNN backend, the whole call;
- e2e:     our `sageattn_qk_int8_pv_fp8_cuda`, the whole call (two quantization launches, then the kernel);
- kernel:  our FP8 attention kernel alone, on inputs quantized beforehand;
- floor:   Q, K and V each converted to e4m3 by torch (read 2 bytes, write 1, an element): the traffic any
           separate pre-pass moves at the least, at the copy bandwidth torch's elementwise kernel reaches;

and prints, in microseconds, with `kernel + floor` beside cuDNN: the best a pre-pass design could do.

    python3 bench/prepass_floor.py [--seqs 1024,2048,4096] [--dims 64,128] [--batch 4 --heads 32]
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attn import sa, time_ms  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--seqs", default="1024,2048,4096")
    ap.add_argument("--causal", default="0,1")
    a = ap.parse_args()
    ops = torch.ops.sageattention
    b, h = a.batch, a.heads
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, B={b} H={h} fp16, microseconds\n")
    print("| head dim | causal | N | cudnn | e2e | kernel | e2e - kernel | floor | kernel + floor | (kernel + floor) / cudnn |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in (int(x) for x in a.dims.split(",")):
        for causal in (bool(int(x)) for x in a.causal.split(",")):
            for n in (int(x) for x in a.seqs.split(",")):
                torch.manual_seed(0)
                q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
                sm = d ** -0.5

                def cudnn():
                    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                qi, qs = ops.quant_q(q, 0, 2)
                ki, ks = ops.quant_k(k, 0, 2, True)
                vf, vs, _ = ops.quant_v_fp8(v, 0, False)
                t = {
                    "cudnn": time_ms(cudnn),
                    "e2e": time_ms(lambda: sa.sageattn_qk_int8_pv_fp8_cuda(q, k, v, is_causal=causal)),
                    "kernel": time_ms(lambda: ops.attn_pv_fp8(qi, qs, ki, ks, vf, vs, None, 0, n, n, d, causal, sm,
                                                              False, torch.float16)),
                    "floor": time_ms(lambda: (q.to(torch.float8_e4m3fn), k.to(torch.float8_e4m3fn),
                                              v.to(torch.float8_e4m3fn))),
                }
                us = {m: 1e3 * ms for m, ms in t.items()}
                best = us["kernel"] + us["floor"]
                print(f"| {d} | {int(causal)} | {n} | {us['cudnn']:.1f} | {us['e2e']:.1f} | {us['kernel']:.1f} | "
                      f"{us['e2e'] - us['kernel']:.1f} | {us['floor']:.1f} | {best:.1f} | {best / us['cudnn']:.2f} |",
                      flush=True)
                del q, k, v, qi, ki, vf
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
