"""Two `sagebuild` builds started together on one cache (separate --out) both
finish with verified wheels.  They share <cache>/work/default: the second waits
for the first (saying so), then finds every object built and packs, verifies
and smoke-tests its own wheel.  Before the work directory had a lock, both
wrote build.ninja, the rows' staging and the smoke test's venv at once (3 of 3
runs failed: one in ensurepip, the other with its wheel gone).

The default profile as it is (all its archs), from an empty cache: about one
full build plus a packing, verify and smoke test (62 s on the 2-core machine,
141 s with other builds running beside it, 2026-11-24).  Needs nvcc 13.0.
"""
import json
import subprocess

import pytest

from test_build_e2e import TORCH_WHEEL, cuda_13_home, sagebuild_binary, source_copy


@pytest.mark.slow
def test_two_builds_on_one_cache_both_finish_with_verified_wheels(tmp_path):
    if cuda_13_home() is None:
        pytest.skip("no CUDA 13.0 nvcc here")
    src = source_copy(tmp_path / "src")
    base = [str(sagebuild_binary()), "--source-dir", str(src), "--profile", "default", "--jobs", "2",
            "--cache-dir", str(tmp_path / "cache"), "--launcher", "none"]
    if TORCH_WHEEL.exists():
        base += ["--torch-wheel", str(TORCH_WHEEL)]
    procs = [subprocess.Popen(base + ["--out", str(tmp_path / f"dist{i}"), "--json", str(tmp_path / f"{i}.json")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
             for i in (1, 2)]
    outs = [p.communicate(timeout=2400)[0] for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-4000:]
    assert sum("waiting for another build using" in out for out in outs) == 1, [o[:2000] for o in outs]
    for i in (1, 2):
        rows = json.loads((tmp_path / f"{i}.json").read_text())["rows"]
        assert len(rows) == 1 and rows[0]["ok"], rows
        wheels = list((tmp_path / f"dist{i}").iterdir())
        assert [w.name for w in wheels] == [rows[0]["wheel"].rsplit("/", 1)[1]]
        v = subprocess.run([str(sagebuild_binary()), "verify", str(wheels[0])], capture_output=True, text=True)
        assert v.returncode == 0, v.stdout[-3000:]
