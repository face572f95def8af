#!/usr/bin/env python3
"""Where a kernel's warps stall, from ncu's source page as CSV
(bench/ncu_profile.sh sass): the stall samples summed per opcode and per
reason, and the instructions holding the most samples with their top reasons.
  bench/sass_stalls.py FILE.csv [TOP]"""
import csv
import collections
import sys


def main():
    path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    cols = rows[head]
    idx = {c: i for i, c in enumerate(cols)}
    reasons = [c for c in cols if c.startswith("stall_") and "(Not Issued)" not in c]

    def num(r, c):
        try:
            return float(r[idx[c]].replace(",", "") or 0)
        except ValueError:
            return 0.0
    insts = []  # (address, SASS, stall samples, samples per reason)
    for r in rows[head + 1:]:
        if len(r) != len(cols) or not (r[0].startswith("0x") or r[0].isdigit()):
            continue
        insts.append((r[idx["Address"]], r[idx["Source"]].strip(), num(r, "Warp Stall Sampling (All Samples)"),
                      {c: num(r, c) for c in reasons}))
    total = sum(i[2] for i in insts) or 1.0
    print(f"{path}: {len(insts)} instructions, {total:.0f} stall samples")
    by_reason = collections.Counter()
    by_op = collections.Counter()
    for _, src, s, rs in insts:
        op = src.split()[0] if src else "?"
        if op.startswith("@"):
            op = src.split()[1]
        by_op[op.split(".")[0]] += s
        by_reason.update(rs)
    print("by reason:", ", ".join(f"{k[6:]} {100 * v / total:.1f}%" for k, v in by_reason.most_common(10)))
    print("by opcode:", ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in by_op.most_common(16)))
    print(f"top {top} instructions (address, share of samples, top reasons, source):")
    for addr, src, s, rs in sorted(insts, key=lambda i: -i[2])[:top]:
        rr = sorted(rs.items(), key=lambda kv: -kv[1])[:3]
        print(f"  {addr} {100 * s / total:5.2f}%  " + " ".join(f"{k[6:]}:{100 * v / total:.2f}" for k, v in rr if v > 0)
              + f"  | {src[:90]}")


if __name__ == "__main__":
    main()
