"""Kernels once per CUDA release, for real: `sagebuild build --row
A --kernels-only --kernel-objects DIR` compiles row A's torch-free kernel
objects alone (no torch found or downloaded) into DIR with kernel-objects.json;
the default row, another row of the same CUDA release (13.0), built with
`--kernel-objects DIR` compiles no kernel unit (sagebuild's --json and ninja's
log say so), only its binding, and links; its wheel is byte-identical to the
one the ordinary build of that row makes.  A directory whose keys do not match the
build's (another checkout's sources, other archs, an object altered after the
fact) is refused before anything compiles.

Needs nvcc 13.0 (skips without), like test_build_e2e.py, whose helpers it
uses; --archs 9.0 and --no-smoke-test keep it to one compile of the kernels
(the kernel job's) plus two bindings.
"""
import hashlib
import json
import shutil
import subprocess

import pytest

from test_build_e2e import TORCH_WHEEL, count_objects, cuda_13_home, sagebuild_binary, source_copy

OTHER_ROW = "sageattention-2.2.0-torch2.12.1-cu130-abi3-linux_x86_64"  # the kernel job's row: same CUDA, other torch


def run(tmp, args):
    return subprocess.run([str(sagebuild_binary())] + args, capture_output=True, text=True, cwd=tmp, timeout=2400)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    if cuda_13_home() is None:
        pytest.skip("no CUDA 13.0 nvcc here")
    tmp = tmp_path_factory.mktemp("kobj")
    src = source_copy(tmp / "src")
    common = ["--source-dir", str(src), "--archs", "9.0", "--jobs", "2", "--launcher", "none"]
    torch = ["--torch-wheel", str(TORCH_WHEEL)] if TORCH_WHEEL.exists() else []
    kdir = tmp / "kernel-objects"
    out = {"tmp": tmp, "src": src, "kdir": kdir, "common": common, "torch": torch}
    out["kernels"] = run(tmp, common + ["--row", OTHER_ROW, "--kernels-only", "--kernel-objects", str(kdir),
                                       "--cache-dir", str(tmp / "c-kernels"), "--json", str(tmp / "kernels.json")])
    out["kernel_cache_after_kernel_job"] = sorted(p.name for p in (tmp / "c-kernels").iterdir())
    out["handed"] = run(tmp, common + torch + ["--kernel-objects", str(kdir), "--cache-dir", str(tmp / "c-handed"),
                                               "--out", str(tmp / "dist-handed"), "--no-smoke-test",
                                               "--json", str(tmp / "handed.json")])
    # The ordinary build of the same row, from the kernel job's cache (its objects reused there, as a
    # second build reuses them): one compile of the kernels in this module keeps .ci/run's time down;
    # test_build_e2e's two builds from different paths and caches show a cold build gives the same wheel.
    out["scratch"] = run(tmp, common + torch + ["--cache-dir", str(tmp / "c-kernels"), "--out",
                                                str(tmp / "dist-scratch"), "--no-smoke-test",
                                                "--json", str(tmp / "scratch.json")])
    return out


def manifest(builds):
    return json.loads((builds["kdir"] / "kernel-objects.json").read_text())


@pytest.mark.slow
def test_the_kernel_job_puts_every_kernel_object_into_the_directory_without_torch(builds):
    r = builds["kernels"]
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "not needed: --kernels-only" in r.stdout
    tmp, kdir = builds["tmp"], builds["kdir"]
    n = count_objects(tmp)
    row = json.loads((tmp / "kernels.json").read_text())["rows"][0]
    assert row["ok"] and row["kernels_compiled"] == n and row["kernels_cached"] == 0, row
    m = manifest(builds)
    assert m["format"] == "sagebuild-kernel-objects-v1" and m["rows"] == [OTHER_ROW]
    assert len(m["objects"]) == n
    for o in m["objects"]:
        assert o["file"] == o["key"] + ".o"
        assert hashlib.sha256((kdir / o["file"]).read_bytes()).hexdigest() == o["sha256"]
        assert o["compiler"].startswith("nvcc 13.0.")
    # Nothing else in the directory (no temporary left), and no torch was fetched or unpacked.
    assert sorted(p.name for p in kdir.iterdir()) == sorted([o["file"] for o in m["objects"]] +
                                                             ["kernel-objects.json"])
    assert not any(name.startswith("torch") for name in builds["kernel_cache_after_kernel_job"])


@pytest.mark.slow
def test_a_row_built_from_the_directory_compiles_no_kernel_and_its_wheel_is_the_scratch_builds(builds):
    for name in ("handed", "scratch"):
        r = builds[name]
        assert r.returncode == 0, name + ": " + r.stdout[-4000:] + r.stderr[-2000:]
    tmp = builds["tmp"]
    n = count_objects(tmp)
    handed = json.loads((tmp / "handed.json").read_text())["rows"][0]
    scratch = json.loads((tmp / "scratch.json").read_text())["rows"][0]
    assert handed["row"] != OTHER_ROW and "-cu130-" in handed["row"]
    assert handed["kernels_compiled"] == 0 and handed["kernels_cached"] == n, handed
    assert scratch["kernels_compiled"] == 0 and scratch["kernels_cached"] == n, scratch
    assert f"kernel objects: {n} taken from {builds['kdir']}" in builds["handed"].stdout
    # ninja's log: the handed build ran the binding's compile and the link, no kernel unit.
    keys = {o["key"] for o in manifest(builds)["objects"]}
    log = (tmp / "c-handed/work/default/.ninja_log").read_text().splitlines()
    outputs = [line.split("\t")[3] for line in log if not line.startswith("#")]
    assert len(outputs) == 2, outputs
    assert not any(k in out for k in keys for out in outputs), outputs
    assert not any(p.stem in keys for p in (tmp / "c-handed/objects").iterdir())
    kernel_logs = [f.read_text() for f in (tmp / "c-kernels/work").rglob(".ninja_log")]
    assert all(any(k in text for text in kernel_logs) for k in keys)  # the kernel job compiled each
    # The same wheel, byte for byte.
    a = tmp / "dist-handed" / handed["wheel"].rsplit("/", 1)[1]
    b = tmp / "dist-scratch" / scratch["wheel"].rsplit("/", 1)[1]
    assert a.name == b.name
    assert a.read_bytes() == b.read_bytes()
    v = subprocess.run([str(sagebuild_binary()), "verify", str(a)], capture_output=True, text=True)
    assert v.returncode == 0, v.stdout[-3000:]


def refused(builds, tmp_path, src=None, kdir=None, archs=None):
    args = list(builds["common"]) + builds["torch"] + [
        "--kernel-objects", str(kdir or builds["kdir"]), "--cache-dir", str(tmp_path / "c"),
        "--out", str(tmp_path / "dist"), "--no-smoke-test"]
    if src:
        args[args.index("--source-dir") + 1] = str(src)
    if archs:
        args[args.index("--archs") + 1] = archs
    r = run(tmp_path, args)
    assert r.returncode == 2, r.stdout[-3000:] + r.stderr[-2000:]
    err = r.stderr.strip()
    assert "\n" not in err and err.startswith("sagebuild: error: --kernel-objects "), err
    assert "kernel unit " in err and "expected key " in err and "fix: rebuild the directory" in err, err
    # Nothing was compiled instead.
    assert not (tmp_path / "c/objects").exists() or not any((tmp_path / "c/objects").iterdir())
    assert not (tmp_path / "dist").exists() or not any((tmp_path / "dist").iterdir())
    return err


@pytest.mark.slow
def test_a_directory_of_other_sources_is_refused(builds, tmp_path):
    assert builds["kernels"].returncode == 0
    src = tmp_path / "src"
    shutil.copytree(builds["src"], src)
    quant = src / "kernels/src/quant.cu"
    quant.write_text(quant.read_text() + "\n// changed after the kernel job\n")
    err = refused(builds, tmp_path, src=src)
    assert "kernel unit quant kernels/src/quant.cu [9.0]" in err and "found key " in err, err


@pytest.mark.slow
def test_a_directory_of_other_archs_is_refused(builds, tmp_path):
    assert builds["kernels"].returncode == 0
    err = refused(builds, tmp_path, archs="8.0,9.0")
    assert "found key " in err and "[8.0 9.0]" in err, err


@pytest.mark.slow
def test_an_object_altered_in_the_directory_is_refused(builds, tmp_path):
    assert builds["kernels"].returncode == 0
    kdir = tmp_path / "kernel-objects"
    shutil.copytree(builds["kdir"], kdir)
    victim = kdir / manifest(builds)["objects"][0]["file"]
    victim.write_bytes(victim.read_bytes() + b"\0")
    err = refused(builds, tmp_path, kdir=kdir)
    assert "altered after it was made" in err, err
    victim.unlink()
    err = refused(builds, tmp_path, kdir=kdir)
    assert "is missing" in err, err


@pytest.mark.slow
def test_a_second_kernel_job_into_the_directory_replaces_what_an_earlier_build_left(builds, tmp_path):
    """An object of the same unit from an earlier build (other sources or flags: another key) is
    replaced and deleted; an entry of other archs stays."""
    assert builds["kernels"].returncode == 0
    kdir = tmp_path / "kernel-objects"
    shutil.copytree(builds["kdir"], kdir)
    m = manifest(builds)
    current = next(o for o in m["objects"] if o["family"] == "quant" and o["source"].endswith("quant.cu"))
    stale = dict(current, key="0" * 64, file="0" * 64 + ".o", sha256=hashlib.sha256(b"earlier").hexdigest())
    other_archs = dict(current, key="1" * 64, file="1" * 64 + ".o", targets=["8.0"],
                       sha256=hashlib.sha256(b"8.0").hexdigest())
    (kdir / stale["file"]).write_bytes(b"earlier")
    (kdir / other_archs["file"]).write_bytes(b"8.0")
    m["objects"] = sorted(m["objects"] + [stale, other_archs], key=lambda o: o["key"])
    (kdir / "kernel-objects.json").write_text(json.dumps(m))
    # The same row again, its objects in the kernel job's cache: nothing compiles.
    r = run(tmp_path, builds["common"] + ["--row", OTHER_ROW, "--kernels-only", "--kernel-objects", str(kdir),
                                          "--cache-dir", str(builds["tmp"] / "c-kernels")])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    after = json.loads((kdir / "kernel-objects.json").read_text())
    keys = {o["key"] for o in after["objects"]}
    assert stale["key"] not in keys and not (kdir / stale["file"]).exists()
    assert other_archs["key"] in keys and (kdir / other_archs["file"]).exists()
    assert {o["key"] for o in m["objects"]} - {stale["key"]} == keys
