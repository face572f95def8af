"""Runs upstream's `sageattn` on fixed inputs, for scripts/gpu-build-upstream.sh.

  upstream_compare.py run OUT.pt [--inputs IN.pt]
      imports `sageattention` from wherever this Python finds it (the anchor
      build through PYTHONPATH, or the sagebuild wheel in a venv), makes the
      inputs (or loads IN.pt), runs every case and saves inputs and outputs.
  upstream_compare.py compare ANCHOR.pt OURS.pt
      prints one line per case and a summary; exit 0 only when every output
      is equal bit for bit.

Two processes, because both builds are the package `sageattention`.
"""
import argparse
import sys

import torch

# (batch, heads, sequence, head dim, dtype, causal): shapes the sm90 path
# takes, a length that is not a multiple of the tiles, both head dims.
CASES = [
    (1, 8, 1024, 128, torch.float16, False),
    (1, 8, 1024, 128, torch.float16, True),
    (2, 16, 2048, 64, torch.bfloat16, False),
    (2, 16, 2048, 64, torch.bfloat16, True),
    (1, 32, 4096, 128, torch.bfloat16, False),
    (2, 8, 1000, 128, torch.float16, True),
    (1, 4, 777, 64, torch.float16, False),
]


def make_inputs():
    gen = torch.Generator(device="cuda").manual_seed(20261124)
    inputs = []
    for b, h, n, d, dtype, causal in CASES:
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=dtype, generator=gen) for _ in range(3))
        inputs.append({"q": q.cpu(), "k": k.cpu(), "v": v.cpu(), "causal": causal})
    return inputs


def run(args):
    import sageattention

    # --inputs: the file the other build's run saved (its "inputs").
    inputs = torch.load(args.inputs)["inputs"] if args.inputs else make_inputs()
    outputs = []
    for case in inputs:
        q, k, v = (case[x].cuda() for x in "qkv")
        o = sageattention.sageattn(q, k, v, tensor_layout="HND", is_causal=case["causal"])
        torch.cuda.synchronize()
        outputs.append(o.cpu())
    torch.save({"inputs": inputs, "outputs": outputs, "module": sageattention.__file__}, args.out)
    print(f"{len(outputs)} cases run with sageattention from {sageattention.__file__}")


def compare(args):
    a = torch.load(args.anchor)
    b = torch.load(args.ours)
    print(f"anchor: {a['module']}\nours:   {b['module']}")
    equal = 0
    for i, (case, oa, ob) in enumerate(zip(a["inputs"], a["outputs"], b["outputs"])):
        shape = "x".join(map(str, case["q"].shape))
        same = oa.dtype == ob.dtype and oa.shape == ob.shape and torch.equal(oa.view(torch.int16), ob.view(torch.int16))
        diff = (oa.float() - ob.float()).abs().max().item() if oa.shape == ob.shape else float("nan")
        nonfinite = int((~torch.isfinite(ob.float())).sum())
        print(f"  case {i}: {shape} {str(oa.dtype).split('.')[-1]} causal={case['causal']}: "
              f"{'bit-identical' if same else 'DIFFERENT'} (max |diff| {diff:.3g}, non-finite in ours {nonfinite})")
        equal += same
    n = len(a["outputs"])
    print(f"SUMMARY: {equal}/{n} cases bit-identical to the anchor build")
    return 0 if equal == n and n == len(b["outputs"]) else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--inputs")
    c = sub.add_parser("compare")
    c.add_argument("anchor")
    c.add_argument("ours")
    args = p.parse_args()
    if args.cmd == "run":
        run(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
