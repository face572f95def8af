#!/usr/bin/env python3
"""Writes tools/sagebuild/verify/manylinux-policy.json, the manylinux policy
that `sagebuild verify` compiles in, from pypa/auditwheel's policy data.

The facts (which symbol versions and which system libraries each
manylinux_X_Y level allows) are auditwheel's, MIT-licensed, as shipped in its
wheel at auditwheel/policy/manylinux-policy.json; PEP 600 defines the level
names (manylinux_X_Y = glibc X.Y and the libraries of that era) and the legacy
aliases.  We keep the architectures our wheels and torch's are built for.

Usage (from the repository root; pip downloads only auditwheel's wheel):
  pip download auditwheel==6.8.2 --no-deps -d /tmp/aw
  unzip -o /tmp/aw/auditwheel-*.whl 'auditwheel/policy/*' -d /tmp/aw
  python3 tools/sagebuild/verify/manylinux_policy_update.py \
      /tmp/aw/auditwheel/policy/manylinux-policy.json 6.8.2
"""
import json
import pathlib
import re
import sys

ARCHS = ("x86_64", "aarch64")
OUT = pathlib.Path(__file__).with_name("manylinux-policy.json")


def version_key(v):
    # "2.2.5" < "2.10"; names such as "TM_1" or "ABI_DT_RELR" sort after numbers.
    parts = re.split(r"[._]", v)
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts]


def level(policy):
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)", policy["name"])
    return (int(m.group(1)), int(m.group(2)))


def convert(policies, source):
    levels = []
    for p in sorted((p for p in policies if p["name"] != "linux"), key=level):
        symbols = {arch: {family: " ".join(sorted(versions, key=version_key))
                          for family, versions in sorted(p["symbol_versions"][arch].items())}
                   for arch in ARCHS if arch in p["symbol_versions"]}
        if not symbols:
            continue
        levels.append({"name": p["name"],
                       "alias": p["aliases"][0] if p["aliases"] else "",
                       "libraries": " ".join(sorted(p["lib_whitelist"])),
                       "symbol_versions": symbols})
    return {
        "about": [
            "The manylinux levels `sagebuild verify` judges binaries against, oldest first.",
            "A level allows, per architecture and symbol-version family (the text before the",
            "first '_' of a VERNEED version: GLIBC_2.17 -> GLIBC), exactly the versions listed:",
            "membership, not <= the newest. A family absent from a level is not judged (e.g.",
            "libcudart's). `libraries` are the sonames a binary may need from the system.",
            "Names and aliases: PEP 600 (manylinux_X_Y: glibc >= X.Y; manylinux1 = 2_5,",
            "manylinux2010 = 2_12, manylinux2014 = 2_17).",
            f"Facts: {source}, auditwheel/policy/manylinux-policy.json (MIT), for x86_64 and",
            "aarch64. Regenerate with manylinux_policy_update.py beside this file.",
        ],
        "levels": levels,
    }


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    policies = json.loads(pathlib.Path(sys.argv[1]).read_text())
    data = convert(policies, f"pypa/auditwheel {sys.argv[2]}")
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT} ({len(data['levels'])} levels)")


if __name__ == "__main__":
    main()
