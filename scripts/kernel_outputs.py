"""Kernel outputs of an installed `sageattention`, recorded and compared bit for bit.

A change that must not alter the kernels (a refactoring, a build-flag change)
is checked on the GPU machine by recording a fixed set of calls with the wheel
before the change and again with the wheel after it:

    python3 scripts/kernel_outputs.py record before.pt        # old wheel on PYTHONPATH
    python3 scripts/kernel_outputs.py record after.pt         # new wheel on PYTHONPATH
    python3 scripts/kernel_outputs.py compare before.pt after.pt

Every call runs twice in `record`, so the file also says whether each output
is deterministic run to run (a comparison between wheels means something only
where it is).  The set covers both P.V paths, the sm90 family and (with
SAGEATTN_SM90=0 set by the caller) the mma.sync family, fp16 and bf16, causal
and not, head dims 64 and 128, GQA, odd lengths, both layouts, return_lse, a
key-padding mask and varlen.  Inputs come from a fixed seed.  `compare` exits 1
on any difference and prints one line per case.
"""
import argparse
import hashlib
import os
import sys

import torch


def _inputs(seed, b, hq, hk, nq, nk, d, dtype, layout):
    g = torch.Generator(device="cuda").manual_seed(seed)

    def make(h, n, bias=0.0):
        shape = (b, h, n, d) if layout == "HND" else (b, n, h, d)
        t = torch.randn(shape, generator=g, device="cuda", dtype=torch.float32)
        return (t + bias).to(dtype)

    return make(hq, nq), make(hk, nk, bias=0.5), make(hk, nk)


def _cases():
    import sageattention as sa

    fp16, bf16 = torch.float16, torch.bfloat16
    cap = torch.cuda.get_device_capability()
    paths = [("fp16", sa.sageattn_qk_int8_pv_fp16_cuda)]
    if cap >= (8, 9):
        paths.append(("fp8", sa.sageattn_qk_int8_pv_fp8_cuda))
    shapes = [  # b, hq, hk, nq, nk, d, dtype, layout, causal
        (1, 2, 2, 1024, 1024, 128, fp16, "HND", False),
        (1, 2, 2, 1536, 1536, 128, bf16, "HND", True),
        (2, 2, 2, 777, 777, 64, fp16, "NHD", False),
        (1, 2, 2, 1000, 1000, 64, bf16, "HND", True),
        (1, 4, 2, 640, 1300, 128, fp16, "HND", False),  # GQA, nq != nk
    ]
    for seed, (b, hq, hk, nq, nk, d, dt, lay, causal) in enumerate(shapes):
        if causal and nq != nk:
            continue
        name = f"{b}x{hq}/{hk}x{nq}/{nk}x{d} {str(dt)[6:]} {lay}{' causal' if causal else ''}"
        for pname, fn in paths:
            yield (f"{pname} {name}", lambda fn=fn, a=(seed, b, hq, hk, nq, nk, d, dt, lay), lay=lay, c=causal:
                   fn(*_inputs(*a), tensor_layout=lay, is_causal=c, return_lse=True))
        yield (f"sageattn {name}", lambda a=(seed, b, hq, hk, nq, nk, d, dt, lay), lay=lay, c=causal:
               sa.sageattn(*_inputs(*a), tensor_layout=lay, is_causal=c))

    def masked():
        q, k, v = _inputs(11, 2, 2, 2, 512, 900, 128, fp16, "HND")
        mask = torch.ones(2, 1, 1, 900, dtype=torch.bool, device="cuda")
        mask[1, ..., 700:] = False
        return sa.sageattn(q, k, v, attn_mask=mask)

    yield ("sageattn key-padding mask 2x2x512/900x128 fp16", masked)

    def varlen():
        lens = [300, 1, 777, 1024]
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
        total = sum(lens)
        g = torch.Generator(device="cuda").manual_seed(12)
        q, k, v = (torch.randn(total, 2, 128, generator=g, device="cuda", dtype=torch.float16) for _ in range(3))
        return sa.sageattn_varlen(q, k, v, cu, cu, max(lens), max(lens), is_causal=True)

    yield ("sageattn_varlen causal 4 sequences x2x128 fp16", varlen)


def _flatten(result):
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flatten(r)]
    return [result] if torch.is_tensor(result) else []


def _digest(tensors):
    h = hashlib.sha256()
    for t in tensors:
        h.update(str((tuple(t.shape), t.dtype)).encode())
        h.update(t.detach().contiguous().cpu().view(torch.uint8).numpy().tobytes()
                 if t.dtype != torch.bool else t.cpu().numpy().tobytes())
    return h.hexdigest()


def record(path):
    torch.backends.cuda.matmul.allow_tf32 = False
    out = {"device": torch.cuda.get_device_name(), "sm90": os.environ.get("SAGEATTN_SM90", "default"), "cases": {}}
    for name, call in _cases():
        first = [t.cpu() for t in _flatten(call())]
        second = [t.cpu() for t in _flatten(call())]
        out["cases"][name] = {"digest": _digest(first), "deterministic": _digest(second) == _digest(first),
                              "tensors": first}
        print(f"{name:60s} {out['cases'][name]['digest'][:16]} "
              f"{'deterministic' if out['cases'][name]['deterministic'] else 'VARIES RUN TO RUN'}")
    torch.save(out, path)


def compare(before_path, after_path):
    a, b = torch.load(before_path), torch.load(after_path)
    bad = 0
    for name, ca in a["cases"].items():
        cb = b["cases"].get(name)
        if cb is None:
            print(f"MISSING  {name}")
            bad += 1
            continue
        if ca["digest"] == cb["digest"]:
            print(f"same     {name}")
            continue
        diffs = [(x.float() - y.float()).abs().max().item() for x, y in zip(ca["tensors"], cb["tensors"])]
        tag = "differs" if ca["deterministic"] and cb["deterministic"] else "differs (not deterministic)"
        print(f"{tag:8s} {name}: max |diff| per output {', '.join(f'{d:.3g}' for d in diffs)}")
        bad += 1
    print(f"{len(a['cases']) - bad} same, {bad} different ({a['device']}, SAGEATTN_SM90={a['sm90']})")
    return 1 if bad else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("record").add_argument("file")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = p.parse_args(argv)
    if args.cmd == "record":
        record(args.file)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
