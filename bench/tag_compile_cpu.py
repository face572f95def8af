#!/usr/bin/env python3
"""A tag's compile CPU, from its plan and one measured build, with and without the kernels job.

The tag's plan is the workflow's own (`.github/scripts/plan.sh SAGEBUILD release sage3 aarch64`, run
here): every row of our tree with its kernel_group (non-empty where two rows or more share platform,
CUDA release and arch set, and so one kernels job); each row's arch set comes from `sagebuild matrix
--format json` of its profile, and which of them each kernel source compiles for from
kernels/families.json.  What each unit costs comes from a
measured build: `scripts/build-phase-profile.py --json` over a row's build.ninja (each nvcc command
cold, alone, one thread), which gives each kernel unit its host part (preprocess, cudafe++, host
compile) and its device part (cicc and ptxas, summed over its archs).  A unit's cost for another arch
set is its host part plus its device part per arch times that set's size; the bindings' compile
times are measured separately and given as arguments.

    python3 bench/tag_compile_cpu.py --plan PLAN.json --rows-json RELEASE.json --rows-json AARCH64.json \\
        --profile PHASES.json --binding-stable 4.5 --binding-classic 16.3 --link 0.6

Prints the compile CPU of the tag's rows of our tree, each row compiling its own kernels (before the
kernels job) and with the kernels job (each group's kernels once, each row its binding), and the ratio.
sageattn3's rows (upstream's tree, no kernel group) are listed and left out: the kernels job does not
change them, and their compile is not in the profile.
"""
import argparse
import json
import os
import re
import sys

FAMILIES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels", "families.json")
HOST_PHASES = ("host preprocess", "host compile", "cudafe++", "fatbinary")
DEVICE_PHASES = ("cicc", "ptxas")


def kernel_units():
    """source (its file name) -> its family in kernels/families.json."""
    families = json.load(open(FAMILIES, encoding="utf-8"))["families"].values()
    return {os.path.basename(source): family for family in families for source in family["sources"]}


def family_archs(family, archs):
    """The row's archs (e.g. ['8.0', '9.0']) a family compiles for: its own `archs` (as major.minor)
    where it names them, else those from its `min_arch` on."""
    if "archs" in family:
        return [a for a in archs if a in {x.rstrip("af") for x in family["archs"]}]
    return [a for a in archs if float(a) >= float(family["min_arch"])]


def unit_models(profile, units):
    """source -> (host seconds, device seconds per arch) from a build-phase-profile.py JSON."""
    models = {}
    for u in profile["units"]:
        m = re.match(r"nvcc \S+ (\S+) \[([^\]]*)\]", u["unit"])
        if not m:
            sys.exit(f"tag_compile_cpu: unexpected unit name {u['unit']!r} in the profile")
        source, archs = m.group(1).rsplit("/", 1)[-1], m.group(2).split()
        host = sum(u["phases"].get(p, 0.0) for p in HOST_PHASES)
        device = sum(u["phases"].get(p, 0.0) for p in DEVICE_PHASES)
        models[source] = (host, device / len(archs))
    missing = set(units) - set(models)
    if missing:
        sys.exit(f"tag_compile_cpu: the profile has no unit for {sorted(missing)}")
    return models


def kernel_cpu(archs, models, units):
    """Seconds of nvcc for one row's kernel units at these archs (e.g. ['8.0', '9.0'])."""
    total = 0.0
    for source, family in units.items():
        host, per_arch = models[source]
        n = len(family_archs(family, archs))
        if n:
            total += host + per_arch * n
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plan", required=True, help="plan.sh's matrix for the tag's profiles")
    ap.add_argument("--rows-json", action="append", required=True,
                    help="`sagebuild matrix --profile P --format json` of each profile of the plan (the rows' archs)")
    ap.add_argument("--profile", required=True, help="build-phase-profile.py --json of a row with every family")
    ap.add_argument("--binding-stable", type=float, required=True, help="seconds: ops_stable.cc (torch >= 2.10)")
    ap.add_argument("--binding-classic", type=float, required=True, help="seconds: ops.cc (torch < 2.10)")
    ap.add_argument("--link", type=float, required=True, help="seconds: the extension's link")
    a = ap.parse_args()

    units = kernel_units()
    models = unit_models(json.load(open(a.profile, encoding="utf-8")), units)
    rows = json.load(open(a.plan, encoding="utf-8"))["include"]
    archs_by_id = {}
    for path in a.rows_json:
        for r in json.load(open(path, encoding="utf-8"))["rows"]:
            archs_by_id[r["id"]] = [x["arch"] for x in r["archs"]]

    ours = [r for r in rows if r["package"] == "sageattention"]
    others = [r for r in rows if r["package"] != "sageattention"]
    before = after = 0.0
    groups = {}
    for r in ours:
        archs = archs_by_id.get(r["id"])
        if archs is None:
            sys.exit(f"tag_compile_cpu: row {r['id']} is in no --rows-json: pass its profile's")
        minor = tuple(int(x) for x in r["torch"].split(".")[:2])
        binding = (a.binding_stable if minor >= (2, 10) else a.binding_classic) + a.link
        k = kernel_cpu(archs, models, units)
        before += k + binding
        after += binding
        if r["kernel_group"]:
            groups[r["kernel_group"]] = k
        else:
            after += k
    after += sum(groups.values())

    print(f"rows of our tree: {len(ours)}; kernel groups: {len(groups)}; "
          f"rows alone in their group: {sum(1 for r in ours if not r['kernel_group'])}")
    print(f"left out: {len(others)} row(s) of another tree ({', '.join(sorted({r['package'] for r in others}))})")
    print(f"compile CPU, every row its own kernels: {before:8.0f} s")
    print(f"compile CPU, the kernels job:          {after:8.0f} s")
    print(f"ratio: {after / before:.3f}")


if __name__ == "__main__":
    main()
