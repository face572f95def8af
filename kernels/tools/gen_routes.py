#!/usr/bin/env python3
"""Writes python/sageattention/_routes.py, the routing table of the C ABI as data.

The table is C (kernels/src/route_table.h); this builds kernels/tools/route_export.cc against
kernels/src/abi.cu with a host C++ compiler ($CXX, else c++ / g++ / clang++; no CUDA needed), runs it
and compares its output with the module.

    python3 kernels/tools/gen_routes.py            # exit 1 when the module differs from the table
    python3 kernels/tools/gen_routes.py --update   # rewrite the module
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULE = ROOT / "python" / "sageattention" / "_routes.py"
SOURCES = [ROOT / "kernels" / "tools" / "route_export.cc", ROOT / "kernels" / "src" / "abi.cu"]


def compiler() -> str | None:
    """A host C++ compiler: $CXX, else the first of c++, g++, clang++ on PATH; None when there is none."""
    if os.environ.get("CXX"):
        return os.environ["CXX"]
    return next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)


def generate() -> str:
    """The module's text, from the C table (raises RuntimeError naming the failing step)."""
    cxx = compiler()
    if cxx is None:
        raise RuntimeError("gen_routes.py: no C++ compiler (set CXX, or install g++)")
    with tempfile.TemporaryDirectory(prefix="sa-routes-") as tmp:
        exe = pathlib.Path(tmp) / "route_export"
        cmd = [cxx, "-std=c++17", "-I", str(ROOT / "kernels" / "include"), "-I", str(ROOT / "kernels" / "src"),
               "-x", "c++", *map(str, SOURCES), "-o", str(exe)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"gen_routes.py: {' '.join(cmd)} failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
        r = subprocess.run([str(exe)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"gen_routes.py: route_export exited {r.returncode}: {r.stderr[-2000:]}")
        return r.stdout


def main(argv) -> int:
    if argv not in ([], ["--update"]):
        print(__doc__, file=sys.stderr)
        return 2
    text = generate()
    if argv == ["--update"]:
        tmp = MODULE.with_suffix(".py.tmp")
        tmp.write_text(text)
        tmp.replace(MODULE)
        print(f"wrote {MODULE.relative_to(ROOT)}")
        return 0
    current = MODULE.read_text() if MODULE.exists() else ""
    if current != text:
        print(f"{MODULE.relative_to(ROOT)} differs from the C routing table (kernels/src/route_table.h); run: "
              "python3 kernels/tools/gen_routes.py --update", file=sys.stderr)
        return 1
    print(f"{MODULE.relative_to(ROOT)} agrees with the C routing table")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
