#!/usr/bin/env python3
"""ncu profile of one `sageattn` call per benchmark point: every kernel of the call
(quantization and attention), with its time, tensor-pipe and issue-slot use, occupancy,
eligible warps and top stall reasons.  The points are bench/compare.py's (the three
tables and the model shapes), so a profile sits beside each measured figure.

    python3 bench/profile_points.py run --out DIR [--points d128:1024,causal:4096,models:Flux,...]
    python3 bench/profile_points.py table DIR          # Markdown, anywhere (no GPU, no torch)

`run` needs ncu and a GPU.  For each point it starts one worker process under ncu
(`--profile-from-start off`): the worker makes two warm-up calls, then one call inside
cudaProfilerStart/Stop, so exactly the kernels of one steady-state call are profiled.
Each point's raw metrics go to DIR/<point>.csv as soon as it is done (a failing point
leaves the others' files), with DIR/<point>.json describing the point.  ncu runs at base
clocks and replays each kernel alone: compare kernels and ratios, not absolute times
with bench/compare.py's.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SECTIONS = ["SpeedOfLight", "ComputeWorkloadAnalysis", "SchedulerStats", "Occupancy", "WarpStateStats",
            "LaunchStats"]
STALL_REASONS = ["barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle",
                 "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
                 "short_scoreboard", "sleeping", "tex_throttle", "wait"]
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
# Tensor-pipe metrics (all tensor instruction types: the int8 Q.K^T and the fp8/fp16 P.V); the first
# one the installed ncu knows for the chip wins (names differ by version).
TENSOR_CANDIDATES = [
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active.avg.pct_of_peak_sustained_active",
]


def all_points():
    """(key, meta) for every point of bench/compare.py, in its order."""
    sys.path.insert(0, HERE)
    from compare import MODELS, SEQS, TABLES  # noqa: E402 (imports torch and sageattention)
    pts = []
    for key, t in TABLES.items():
        for n in SEQS:
            pts.append((f"{key}_{n // 1024}k", dict(table=key, title=t["title"], b=4, hq=32, hk=32, n=n, d=t["d"],
                                                     causal=t["causal"], layout="HND", dtype="float16")))
    for name, b, hq, hk, n, d, causal, lay in MODELS:
        pts.append((re.sub(r"\W+", "_", name.split(" ")[0]).lower(),
                    dict(table="models", title=name, b=b, hq=hq, hk=hk, n=n, d=d, causal=causal, layout=lay,
                         dtype="bfloat16")))
    return pts


def worker(meta):
    """One point's inputs as compare.py makes them, two warm-up calls, then one call under the profiler."""
    import torch

    sys.path.insert(0, HERE)
    from compare import make_qkv, ours as sa  # noqa: E402 (sageattention as compare.py imports it)

    q, k, v = make_qkv(meta["b"], meta["hq"], meta["hk"], meta["n"], meta["d"], meta["layout"],
                       getattr(torch, meta["dtype"]))

    def call():
        return sa.sageattn(q, k, v, tensor_layout=meta["layout"], is_causal=meta["causal"])
    for _ in range(2):
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def known_metrics(ncu):
    try:
        out = subprocess.run([ncu, "--query-metrics", "--chip", "gh100"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {line.split()[0] for line in out.splitlines() if line.strip() and not line.startswith("-")}


def run(args):
    os.makedirs(args.out, exist_ok=True)
    pts = all_points()
    for i, (_, meta) in enumerate(pts):
        meta["order"] = i
    if args.points:
        want = args.points.split(",")
        pts = [p for p in pts if any(p[0] == w or p[0].startswith(w) for w in want)]
        if not pts:
            sys.exit(f"--points {args.points}: no point matches; points are "
                     + ", ".join(k for k, _ in all_points()))
    known = known_metrics(args.ncu)
    tensor = [m for m in TENSOR_CANDIDATES if m.split(".")[0] in known][:1]
    extra = ",".join(tensor + ["launch__registers_per_thread"] + [STALL.format(r) for r in STALL_REASONS])
    print(f"{len(pts)} points; tensor-pipe metric: {tensor[0] if tensor else 'none known, from the sections'}",
          flush=True)
    for i, (key, meta) in enumerate(pts, 1):
        t0 = time.time()
        tmp = os.path.join(args.out, key + ".csv.part")
        cmd = [args.ncu, "--profile-from-start", "off", "--csv", "--page", "raw", "--log-file", tmp]
        for s in SECTIONS:
            cmd += ["--section", s]
        cmd += ["--metrics", extra,
                sys.executable, os.path.abspath(__file__), "worker", json.dumps(meta)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            rc, err = r.returncode, (r.stdout + r.stderr)[-600:]
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        if rc == 0 and os.path.exists(tmp):
            os.replace(tmp, os.path.join(args.out, key + ".csv"))
            with open(os.path.join(args.out, key + ".json"), "w") as f:
                json.dump(meta, f)
            status = "ok"
        else:
            status = f"FAILED (rc {rc}): {err.strip()}"
        print(f"[{i}/{len(pts)}] {key}: {status} ({time.time() - t0:.0f} s)", flush=True)


def read_csv(path):
    """Rows of ncu's raw CSV (header, units, one row per kernel) as dicts of name -> str."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(lines[start:]))
    head = rows[0]
    return [dict(zip(head, r)) for r in rows[2:] if len(r) == len(head)]


def num(row, name):
    v = row.get(name, "").replace(",", "")
    try:
        return float(v)
    except ValueError:
        return None


def short_kernel(name):
    """`void ns::attn_sm90_kernel<128, 1, 1, __half>(ns::Params)` -> `attn_sm90_kernel<128, 1, 1, __half>`."""
    base = re.sub(r"\(.*", "", name).replace("void ", "").strip()
    m = re.search(r"(\w+)(<[^>]*>)?$", base)
    return (m.group(1) + (m.group(2) or "")) if m else base[:40]


def tensor_pct(row):
    for m in TENSOR_CANDIDATES:
        if num(row, m) is not None:
            return num(row, m)
    vals = [num(row, k) for k in row if "pipe_tensor" in k and k.endswith("pct_of_peak_sustained_active")]
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def stalls(row, top=3):
    st = []
    for k in row:
        m = re.match(r"smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$", k)
        if m and m.group(1) not in ("selected", "not_selected") and num(row, k):
            st.append((num(row, k), m.group(1)))
    return ", ".join(f"{n} {v:.2f}" for v, n in sorted(st, reverse=True)[:top])


def table(args):
    metas = {}
    for f in os.listdir(args.dir):
        if f.endswith(".json") and os.path.exists(os.path.join(args.dir, f[:-5] + ".csv")):
            with open(os.path.join(args.dir, f)) as fh:
                metas[f[:-5]] = json.load(fh)
    if not metas:
        sys.exit(f"{args.dir}: no profiled points (<point>.csv with <point>.json); run `profile_points.py run` first")
    fmt = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    print("| point | kernel | µs | share | tensor % | issue % | DRAM % | occupancy % (theor.) | eligible / active warps"
          " per scheduler | regs | top stalls (cycles per issue) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key, meta in sorted(metas.items(), key=lambda kv: kv[1].get("order", 0)):
        rows = read_csv(os.path.join(args.dir, key + ".csv"))
        total = sum(num(r, "gpu__time_duration.sum") or 0 for r in rows) / 1e3
        label = (f"{meta['title']}" if meta["table"] == "models" else
                 f"{meta['table']} {meta['n'] // 1024}k") + f" (call {total:.0f} µs)"
        for j, r in enumerate(rows):
            us = (num(r, "gpu__time_duration.sum") or 0) / 1e3
            print(f"| {label if j == 0 else ''} | {short_kernel(r.get('Kernel Name', '?'))} | {us:.1f} | "
                  f"{100 * us / total if total else 0:.0f} % | {fmt(tensor_pct(r), '.1f')} | "
                  f"{fmt(num(r, 'smsp__issue_active.avg.pct_of_peak_sustained_active'), '.1f')} | "
                  f"{fmt(num(r, 'gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed'), '.1f')} | "
                  f"{fmt(num(r, 'sm__warps_active.avg.pct_of_peak_sustained_active'), '.1f')} "
                  f"({fmt(num(r, 'sm__maximum_warps_per_active_cycle_pct'), '.1f')}) | "
                  f"{fmt(num(r, 'smsp__warps_eligible.avg.per_cycle_active'), '.2f')} / "
                  f"{fmt(num(r, 'smsp__warps_active.avg.per_cycle_active'), '.2f')} | "
                  f"{fmt(num(r, 'launch__registers_per_thread'), '.0f')} | {stalls(r)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--points", help="comma-separated point keys or prefixes (d128_1k, causal, models...)")
    r.add_argument("--ncu", default="ncu")
    r.add_argument("--timeout", type=int, default=180, help="seconds per point")
    t = sub.add_parser("table")
    t.add_argument("dir")
    w = sub.add_parser("worker")
    w.add_argument("meta")
    a = ap.parse_args()
    if a.cmd == "worker":
        worker(json.loads(a.meta))
    elif a.cmd == "run":
        run(a)
    else:
        table(a)


if __name__ == "__main__":
    main()
