#!/usr/bin/env python3
"""Where a cold build's time goes, unit by unit and phase by phase.

Reads the build.ninja that sagebuild wrote for a row (its work directory,
e.g. ~/.cache/sagebuild/work/default/build.ninja after `sagebuild --profile
default`), reruns every nvcc command in it one at a time, cold (without the
launcher, into a temporary object), with `--time` (nvcc's own per-phase
timing: cudafe++, cicc, ptxas, fatbinary, the host compiler, ...), and prints
one table: each unit's wall time and the seconds of each phase summed over its
archs, then the phases over all units.  Units run one at a time so that each
one's phases are its own; `--threads` in a command is dropped for the same
reason.

    python3 scripts/build-phase-profile.py ~/.cache/sagebuild/work/default/build.ninja [--json out.json]
"""
import argparse
import collections
import csv
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time


def nvcc_commands(ninja_path):
    """(description, argv) of every nvcc command of the file."""
    out, desc = [], None
    lines = open(ninja_path, encoding="utf-8").read().splitlines()
    cmds = {}
    current = None
    for line in lines:
        if line.startswith("build "):
            current = line
            cmds[current] = {}
        elif current and line.startswith("  ") and " = " in line:
            key, value = line.strip().split(" = ", 1)
            cmds[current][key] = value
    for build, kv in cmds.items():
        cmd = kv.get("cmd", "")
        if "nvcc" not in cmd:
            continue
        desc = kv.get("desc", build)
        first = cmd.split(" && ")[0]  # the compile; the rest renames its output
        argv = shlex.split(first)
        if os.path.basename(argv[0]) in ("ccache", "sccache"):
            argv = argv[1:]
        out.append((desc, argv))
    return out


def phase_name(name):
    """nvcc's phase names grouped: the host compiler's preprocessing passes together, its compile alone."""
    if "(preprocessing" in name:  # gcc / c++ / cl, named after the host compiler nvcc ran
        return "host preprocess"
    if "(compiling" in name:
        return "host compile"
    return name


def phase_rows(csv_path):
    """{phase: seconds} from nvcc --time's CSV: source, phase, inputs, output, arch, tool, value, unit."""
    phases = collections.Counter()
    with open(csv_path, newline="", encoding="utf-8") as f:
        for row in csv.reader(f):
            if len(row) < 8 or row[-1].strip() != "ms":
                continue
            name = row[1].strip()
            if name == "nvcc (driver)":
                continue
            phases[phase_name(name)] += float(row[-2]) / 1000.0
    return phases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ninja", help="the build.ninja of a sagebuild work directory")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    units = nvcc_commands(args.ninja)
    if not units:
        sys.exit(f"{args.ninja}: no nvcc command found")
    results, total = [], collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (desc, argv) in enumerate(units):
            argv = [a for a in argv if not a.startswith("--threads")]
            o = argv.index("-o")
            argv[o + 1] = os.path.join(tmp, f"u{i}.o")
            timing = os.path.join(tmp, f"u{i}.csv")
            print(f"[{i + 1}/{len(units)}] {desc}", file=sys.stderr, flush=True)
            t0 = time.monotonic()
            r = subprocess.run(argv + ["--time", timing], capture_output=True, text=True)
            wall = time.monotonic() - t0
            if r.returncode != 0:
                sys.exit(f"{desc}: nvcc failed ({r.returncode}):\n{r.stderr[-2000:]}")
            phases = phase_rows(timing)
            total.update(phases)
            results.append(dict(unit=desc, wall_s=round(wall, 1), phases={k: round(v, 1) for k, v in phases.items()}))
    names = [n for n, _ in total.most_common()]
    print("| unit | wall | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for r in results:
        print(f"| {r['unit']} | {r['wall_s']:.1f} s | " + " | ".join(f"{r['phases'].get(n, 0):.1f}" for n in names) + " |")
    print(f"| all units | {sum(r['wall_s'] for r in results):.1f} s | " +
          " | ".join(f"{total[n]:.1f}" for n in names) + " |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(dict(units=results, phases_s={n: round(total[n], 1) for n in names}), f, indent=1)


if __name__ == "__main__":
    main()
