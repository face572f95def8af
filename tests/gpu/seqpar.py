"""Sequence parallelism over several GPUs: yunchang's LongContextAttention
(Ulysses x Ring) with SageAttention's attention types, run by
tests/gpu/test_seqpar.py and bench/bench_seqpar.py.

``run(world, cases, out)`` spawns one process per GPU (NCCL; or per CPU rank
with gloo and ``device="cpu"``, which checks the harness itself), builds the
Ulysses and Ring process groups of each case's topology, gives every rank its
contiguous shard of the sequence (yunchang's "basic" ring layout), runs the
attention under no_grad, and compares the shards with full attention on one
GPU (torch SDPA over the whole sequence, in the inputs' dtype).  With
``timing`` it also times the sharded forward (the slowest rank's median).
Rank 0 writes one JSON record per case to ``out``.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import os
import socket
import traceback
import zlib
from datetime import timedelta
from typing import List

import torch

SAGE_TYPES = ("SAGE_AUTO", "SAGE_FP16", "SAGE_FP16_TRITON", "SAGE_FP8", "SAGE_FP8_SM90")
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


@dataclasses.dataclass(frozen=True)
class Case:
    ulysses: int
    ring: int
    attn: str  # a yunchang AttnType name
    dtype: str  # "bf16", "fp16" (or "fp32")
    d: int
    n: int  # the whole sequence
    causal: bool
    heads: int = 24
    batch: int = 1

    @property
    def key(self) -> str:
        return (f"u{self.ulysses}r{self.ring}-{self.attn}-{self.dtype}-d{self.d}-n{self.n}"
                f"-{'causal' if self.causal else 'full'}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(world: int, cases: List[Case], out: str, timing: bool = False, iters: int = 10,
        device: str = "cuda") -> List[dict]:
    """Run ``cases`` on ``world`` GPUs (or CPU ranks); returns rank 0's records (also written to ``out``)."""
    import torch.multiprocessing as mp

    tmp = out + ".part"
    mp.spawn(_worker, args=(world, _free_port(), [dataclasses.asdict(c) for c in cases], tmp, timing, iters, device),
             nprocs=world, join=True)
    os.replace(tmp, out)
    with open(out) as f:
        return json.load(f)


def _worker(rank, world, port, cases, out, timing, iters, device):
    import torch.distributed as dist
    from yunchang import set_seq_parallel_pg

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    # a rank that fails alone leaves the others in a collective: the timeout ends the run instead of hanging
    if device == "cuda":
        torch.cuda.set_device(rank)
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank),
                                timeout=timedelta(seconds=120))
    else:
        dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=120))
    records = []
    cases = [Case(**c) for c in cases]
    try:
        for (u, r), group in itertools.groupby(cases, key=lambda c: (c.ulysses, c.ring)):
            set_seq_parallel_pg(u, r, rank, world)
            for case in group:
                records.append(_run_case(case, rank, world, timing, iters, device))
    finally:
        if rank == 0:
            with open(out, "w") as f:
                json.dump(records, f, indent=1)
        dist.barrier()
        dist.destroy_process_group()


def _run_case(case: Case, rank: int, world: int, timing: bool, iters: int, device: str) -> dict:
    import torch.distributed as dist
    from yunchang import LongContextAttention
    from yunchang.kernels import AttnType

    rec = dict(dataclasses.asdict(case), key=case.key, world=world, error=None)
    g = torch.Generator(device=device).manual_seed(zlib.crc32(case.key.encode()))  # the same on every rank
    shape = (case.batch, case.n, case.heads, case.d)
    dtype = DTYPES[case.dtype]
    q, k, v = (torch.randn(shape, generator=g, device=device, dtype=torch.float32) for _ in range(3))
    k = k + 2.0 * torch.randn(case.d, generator=g, device=device)  # a per-channel K bias, as in real models
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    local = [t.chunk(world, dim=1)[rank].contiguous() for t in (q, k, v)]
    try:
        attn = LongContextAttention(ring_impl_type="basic", attn_type=AttnType[case.attn])
        with torch.no_grad():
            out = attn(*local, causal=case.causal)
            full = torch.nn.functional.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=case.causal).transpose(1, 2)
        ref = full.chunk(world, dim=1)[rank]
        o, r = out.double().flatten(), ref.double().flatten()
        sums = torch.stack([(o * r).sum(), (o * o).sum(), (r * r).sum(), (o - r).abs().sum(), r.abs().sum(),
                            torch.isfinite(o).all().double()])
        dist.all_reduce(sums[:5])
        finite = sums[5:].clone()
        dist.all_reduce(finite, op=dist.ReduceOp.MIN)
        rec.update(cos=(sums[0] / (sums[1].sqrt() * sums[2].sqrt())).item(), l1=(sums[3] / sums[4]).item(),
                   finite=bool(finite.item()), out_shape=list(out.shape), out_dtype=str(out.dtype))
        if timing:
            rec["ms"] = _time(lambda: attn(*local, causal=case.causal), iters)
    except Exception as e:  # recorded per case, so that one failure does not hide the others
        rec["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"
    return rec


def _time(fn, iters: int) -> float:
    """The median of ``iters`` calls in ms, the slowest rank's (calls start together after a barrier)."""
    import torch.distributed as dist

    with torch.no_grad():
        for _ in range(3):
            fn()
        times = []
        for _ in range(iters):
            dist.barrier()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    t = torch.tensor(sorted(times)[len(times) // 2], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()
