"""`sagebuild build` for real: nvcc, the torch wheel, ninja, the pack writer,
verify and pip in a fresh venv, on the default row reduced to one arch (9.0)
so it stays within a few minutes on 2 cores.  The source copy carries one more
kernel family than kernels/families.json, the test-only `archs: ["9.0a"]`
family tests/build/kernels/probe_sm90.cu (one tiny kernel, a few seconds of
nvcc), so that an arch-specific family goes through the whole build and verify.

Needs: $SAGEBUILD (or build*/tools/sagebuild/cli/sagebuild) and nvcc 13.0.
torch 2.11.0 comes from a local wheel ($SAGEBUILD_TORCH_WHEEL) when there is
one, else from python3 when it has torch 2.11.0 (scripts/install-deps.sh
installs it), else sagebuild downloads it from PyPI as a user's build would.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TORCH_WHEEL = pathlib.Path(os.environ.get(
    "SAGEBUILD_TORCH_WHEEL", "/tmp/torchwhl/torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl"))


def sagebuild_binary():
    env = os.environ.get("SAGEBUILD")
    if env and pathlib.Path(env).exists():
        return pathlib.Path(env)
    for d in ("build", "build-build"):
        p = ROOT / d / "tools/sagebuild/cli/sagebuild"
        if p.exists():
            return p
    pytest.skip("sagebuild is not built (set $SAGEBUILD)")


def cuda_13_home():
    """The CUDA 13.0 toolkit the build takes: $CUDA_HOME, /usr/local/cuda or
    nvcc's on PATH (scripts/test.sh exports CUDA_HOME, the one sagebuild
    provisioned from PyPI where the machine has none); None without one."""
    homes = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    if shutil.which("nvcc"):
        homes.append(str(pathlib.Path(shutil.which("nvcc")).resolve().parents[1]))
    for home in homes:
        nvcc = pathlib.Path(home) / "bin/nvcc"
        if home and nvcc.exists() and "release 13.0" in subprocess.run(
                [nvcc, "--version"], capture_output=True, text=True).stdout:
            return home
    return None


# Substrings of each family's kernel names, for build_info.json, used only
# where kernels/families.json does not name its own yet.
MARKERS = {"quant": "qkv_stats_q_kernel", "pv_fp16": "attn_kernel", "pv_fp8": "attn_kernel"}

# The test-only arch-specific family (wgmma.fence: compiles for sm_90a alone).
PROBE_SOURCE = "tests/build/kernels/probe_sm90.cu"
PROBE = {"sources": [PROBE_SOURCE], "archs": ["9.0a"], "symbol_marker": "probe_sm90_kernel"}


def source_copy(dest):
    """The parts of the source tree a build reads, copied so the test does not
    depend on (or disturb) a developer's build outputs in python/."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "dev")
    for d in ("matrix", "kernels", "python"):
        shutil.copytree(ROOT / d, dest / d, ignore=ignore)
    manifest = dest / "kernels/families.json"
    data = json.loads(manifest.read_text())
    for name, fam in data["families"].items():
        fam.setdefault("symbol_marker", MARKERS.get(name, name))
    data["families"]["probe_sm90"] = PROBE
    (dest / PROBE_SOURCE).parent.mkdir(parents=True)
    shutil.copy(ROOT / PROBE_SOURCE, dest / PROBE_SOURCE)
    manifest.write_text(json.dumps(data, indent=2))
    return dest


def count_objects(tmp, arch="9.0"):
    """The kernel objects a build for one arch compiles: one per source of
    every family that arch runs (min_arch at or below it, or its archs list
    naming it or its 'a' variant)."""
    families = json.loads((tmp / "src/kernels/families.json").read_text())["families"]
    major_minor = tuple(int(x) for x in arch.split("."))

    def runs(fam):
        if "archs" in fam:
            return arch in fam["archs"] or arch + "a" in fam["archs"]
        return tuple(int(x) for x in fam.get("min_arch", "0.0").split(".")) <= major_minor

    return sum(len(fam["sources"]) for fam in families.values() if runs(fam))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if cuda_13_home() is None:
        pytest.skip("no CUDA 13.0 nvcc here")
    tmp = tmp_path_factory.mktemp("e2e")
    src = source_copy(tmp / "src")
    base = [str(sagebuild_binary()), "--source-dir", str(src), "--archs", "9.0", "--jobs", "2",
            "--cache-dir", str(tmp / "cache"), "--out", str(tmp / "dist"), "--launcher", "none"]
    if TORCH_WHEEL.exists():
        base += ["--torch-wheel", str(TORCH_WHEEL)]
    first = subprocess.run(base + ["--json", str(tmp / "first.json")], capture_output=True, text=True,
                           cwd=tmp, timeout=1800)
    return {"tmp": tmp, "base": base, "first": first}


@pytest.mark.slow
def test_default_row_builds_a_verified_wheel(built):
    r = built["first"]
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    report = json.loads((built["tmp"] / "first.json").read_text())
    assert report["ok"] and len(report["rows"]) == 1
    row = report["rows"][0]
    wheel = pathlib.Path(row["wheel"])
    assert wheel.exists() and wheel.parent == built["tmp"] / "dist"
    # every family of kernels/families.json runs on 9.0 (min_arch <= 9.0, or archs 9.0a), + the sm_90a probe:
    # one object per source
    n_objects = count_objects(built["tmp"])
    assert row["kernels_compiled"] == n_objects and row["kernels_cached"] == 0
    names = zipfile.ZipFile(wheel).namelist()
    assert "sageattention/_C.abi3.so" in names
    assert "sageattention/build_info.json" in names
    info = json.loads(zipfile.ZipFile(wheel).read("sageattention/build_info.json"))
    assert info["torch"]["version"] == "2.11.0" and info["cuda"]["nvcc"].startswith("13.0.")
    assert info["archs"] == ["9.0"]
    assert info["kernel_families"]["probe_sm90"] == {"archs": ["9.0a"], "symbol_marker": "probe_sm90_kernel"}
    assert info["kernel_families"]["pv_fp8"]["min_arch"] == "8.9"
    # No temporary or half-written file is left in --out.
    assert [p.name for p in (built["tmp"] / "dist").iterdir()] == [wheel.name]
    # The extension carries no rpath into this machine.
    so = built["tmp"] / "so"
    so.write_bytes(zipfile.ZipFile(wheel).read("sageattention/_C.abi3.so"))
    dyn = subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True).stdout
    assert "RPATH" not in dyn and "RUNPATH" not in dyn
    assert "libtorch" in dyn or "libc10" in dyn


GLIBC = re.compile(rb"GLIBC_2\.(\d+)")


@pytest.mark.slow
def test_the_wheel_is_tagged_with_the_manylinux_level_its_binary_satisfies(built, tmp_path):
    """The build derives the tag with verify's own rules: the level is at
    least the newest GLIBC_2.N the extension needs, verify accepts it, and
    the same wheel claiming an older level is refused."""
    assert built["first"].returncode == 0
    row = json.loads((built["tmp"] / "first.json").read_text())["rows"][0]
    wheel = pathlib.Path(row["wheel"])
    m = re.fullmatch(r"sageattention-.*-cp\d+-abi3-manylinux_2_(\d+)_x86_64\.whl", wheel.name)
    assert m, wheel.name
    level = int(m.group(1))
    assert row["platform_tag"].startswith(f"manylinux_2_{level}_x86_64, the oldest level the binaries satisfy")
    so = zipfile.ZipFile(wheel).read("sageattention/_C.abi3.so")
    needs = max(int(n) for n in GLIBC.findall(so))
    assert level >= needs
    info = json.loads(zipfile.ZipFile(wheel).read("sageattention/build_info.json"))
    assert info["wheel"]["platform_tag"] == info["platform"] == f"manylinux_2_{level}_x86_64"
    ok = subprocess.run([str(sagebuild_binary()), "verify", str(wheel)], capture_output=True, text=True)
    assert ok.returncode == 0 and "P2" not in ok.stdout, ok.stdout[-3000:]
    # Claiming manylinux_2_17 (older than the glibc the binary needs): the
    # tag in the name, WHEEL and build_info.json all say so, and verify refuses it.
    lower = tmp_path / wheel.name.replace(f"manylinux_2_{level}_", "manylinux_2_17_")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(lower, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.endswith((".dist-info/WHEEL", "build_info.json")):
                data = data.replace(f"manylinux_2_{level}_".encode(), b"manylinux_2_17_")
            dst.writestr(item, data)
    bad = subprocess.run([str(sagebuild_binary()), "verify", str(lower)], capture_output=True, text=True)
    assert bad.returncode == 1, bad.stdout[-3000:]
    assert f"claims manylinux_2_17, but the binaries need manylinux_2_{level}" in bad.stdout, bad.stdout[-3000:]


def test_a_family_without_symbol_marker_is_refused_before_compiling(tmp_path):
    src = tmp_path / "src"
    for d in ("matrix", "kernels"):
        shutil.copytree(ROOT / d, src / d, ignore=shutil.ignore_patterns("__pycache__", "dev"))
    manifest = src / "kernels/families.json"
    data = json.loads(manifest.read_text())
    for name, fam in data["families"].items():
        fam.setdefault("symbol_marker", MARKERS.get(name, name))
    data["families"]["quant"].pop("symbol_marker")
    manifest.write_text(json.dumps(data))
    r = subprocess.run([str(sagebuild_binary()), "--source-dir", str(src), "--cache-dir", str(tmp_path / "c"),
                        "--out", str(tmp_path / "dist"), "--dry-run"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1
    assert "families.quant.symbol_marker missing" in r.stdout
    assert not (tmp_path / "c/objects").exists()


@pytest.mark.slow
def test_the_archs_family_is_in_the_wheel_as_verify_demands(built):
    # build_info promises probe_sm90 for 9.0a and lists arch 9.0, so B6 passes
    # only with sm_90a SASS holding probe_sm90_kernel (the Catch2 tests show it
    # fails without).
    assert built["first"].returncode == 0
    wheel = pathlib.Path(json.loads((built["tmp"] / "first.json").read_text())["rows"][0]["wheel"])
    r = subprocess.run([str(sagebuild_binary()), "verify", "--json", str(wheel)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert '"B6"' not in r.stdout


@pytest.mark.slow
def test_second_build_is_a_no_op_that_reuses_every_object(built):
    assert built["first"].returncode == 0
    r = subprocess.run(built["base"] + ["--json", str(built["tmp"] / "second.json")],
                       capture_output=True, text=True, cwd=built["tmp"], timeout=900)
    assert r.returncode == 0, r.stdout[-4000:]
    n_objects = count_objects(built["tmp"])
    assert f"kernels: {n_objects} objects cached, 0 to compile; bindings: 1 cached, 0 to compile" in r.stdout
    row = json.loads((built["tmp"] / "second.json").read_text())["rows"][0]
    assert row["kernels_cached"] == n_objects and row["kernels_compiled"] == 0


def pypi_reachable():
    import urllib.request
    try:
        req = urllib.request.Request("https://pypi.org/simple/torch/", method="HEAD",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        with urllib.request.urlopen(req, timeout=10):
            return True
    except Exception:
        return False


SECOND_TORCH = "2.12.1"  # the matrix lists it for CUDA 13.0


@pytest.mark.slow
def test_a_second_torch_release_reuses_the_stable_abi_extension(built):
    """torch >= binding.stable_abi.min_torch: the row for another torch release
    compiles nothing, links nothing, downloads no torch wheel (its CUDA is read
    from the index's wheel with range requests) and ships the same bytes."""
    assert built["first"].returncode == 0
    if not pypi_reachable():
        pytest.skip("PyPI is not reachable: the second torch's version.py cannot be read")
    tmp = built["tmp"]
    row_id = f"sageattention-2.2.0-torch{SECOND_TORCH}-cu130-abi3-linux_x86_64"
    r = subprocess.run(built["base"] + ["--row", row_id, "--json", str(tmp / "second-torch.json")],
                       capture_output=True, text=True, cwd=tmp, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "bindings: 1 cached, 0 to compile; links: 0 (1 shared extensions cached)" in r.stdout, r.stdout
    assert f"torch {SECOND_TORCH} for CUDA 13.0: torch/version.py of the index's wheel (HTTP ranges)" in r.stdout, \
        r.stdout
    # No torch wheel of that release was downloaded or unpacked.
    cache = tmp / "cache"
    assert not (cache / "downloads" / f"torch-{SECOND_TORCH}-cu130").exists()
    assert not any(p.name.startswith(SECOND_TORCH) for p in (cache / "torch").iterdir()) if (cache / "torch").exists() else True
    first = json.loads((tmp / "first.json").read_text())["rows"][0]["wheel"]
    second = json.loads((tmp / "second-torch.json").read_text())["rows"][0]["wheel"]
    z1, z2 = zipfile.ZipFile(first), zipfile.ZipFile(second)
    assert z1.read("sageattention/_C.abi3.so") == z2.read("sageattention/_C.abi3.so")
    info = json.loads(z2.read("sageattention/build_info.json"))
    assert info["torch"]["version"] == SECOND_TORCH and info["torch"]["cuda"] == "13.0"
    meta = z2.read(next(n for n in z2.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    # Both wheels carry the same stable-ABI extension, so both admit every
    # torch it loads in (wheel/torch_requirement.h): pip keeps the user's torch.
    assert "Requires-Dist: torch>=2.10,<3" in meta
    # The shared extension needs torch only through the C shim's libraries.
    so = tmp / "stable.so"
    so.write_bytes(z2.read("sageattention/_C.abi3.so"))
    needed = [line.split("[")[1].rstrip("]") for line in subprocess.run(
        ["readelf", "-d", str(so)], capture_output=True, text=True).stdout.splitlines() if "(NEEDED)" in line]
    assert sorted(n for n in needed if "torch" in n or "c10" in n) == ["libtorch_cpu.so", "libtorch_cuda.so"], needed
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(so)], capture_output=True, text=True).stdout
    assert "_ZN2at" not in undefined and "_ZN3c10" not in undefined and "aoti_torch_" in undefined


@pytest.mark.slow
def test_dry_run_prints_commands_and_compiles_nothing(built):
    assert built["first"].returncode == 0
    # A different arch set: new keys, so there is something to show.
    cmd = [a if a != "9.0" else "8.0" for a in built["base"]] + ["--dry-run"]
    objects = sorted((built["tmp"] / "cache/objects").iterdir())
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=built["tmp"], timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    # 8.0 only: pv_fp8 (min_arch 8.9), sm90 and the probe (archs 9.0a) are left out, the binding is reused.
    n_objects = count_objects(built["tmp"], arch="8.0")
    assert f"kernels: 0 objects cached, {n_objects} to compile; bindings: 1 cached, 0 to compile" in r.stdout
    assert "pv_fp8, no arch >= min_arch 8.9" in r.stdout
    assert "probe_sm90, the row lists none of 9.0, 9.0a (for its archs 9.0a)" in r.stdout
    assert "compute_90a" not in r.stdout
    assert "'arch=compute_80,code=[sm_80,compute_80]'" in r.stdout
    assert "&& mv -f" in r.stdout
    assert sorted((built["tmp"] / "cache/objects").iterdir()) == objects


def test_unknown_row_is_a_usage_error_naming_the_argument(tmp_path):
    r = subprocess.run([str(sagebuild_binary()), "--source-dir", str(ROOT), "--row", "no-such-row",
                        "--cache-dir", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2
    assert "--row no-such-row: no such row" in r.stderr


def test_bad_archs_is_a_usage_error(tmp_path):
    r = subprocess.run([str(sagebuild_binary()), "build", "--source-dir", str(ROOT), "--archs", "nine",
                        "--cache-dir", str(tmp_path), "--dry-run"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2
    assert "--archs" in r.stderr and "expected <major>.<minor>[a]" in r.stderr


@pytest.mark.slow
def test_keep_going_builds_the_good_row_and_reports_the_failed_one(built):
    assert built["first"].returncode == 0
    tmp = built["tmp"]
    good = "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64"
    bad = "sageattention-2.2.0-torch2.11.0-cu128-abi3-linux_x86_64"  # no CUDA 12.8 under --cuda-home
    out = tmp / "dist-keep-going"
    base = [a for a in built["base"] if a not in (str(tmp / "dist"),)]
    base[base.index("--out") + 1:base.index("--out") + 1] = [str(out)]
    cmd = base + ["--row", bad, "--row", good, "--keep-going", "--cuda-home", cuda_13_home(),
                  "--json", str(tmp / "keep.json")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=900)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    rows = {row["row"]: row for row in json.loads((tmp / "keep.json").read_text())["rows"]}
    assert rows[good]["ok"] and pathlib.Path(rows[good]["wheel"]).exists()
    assert not rows[bad]["ok"] and rows[bad]["stage"] == "toolchain"
    assert "CUDA 12.8" in rows[bad]["error"]
    # The failed row left no wheel behind; the good one is the only file in --out.
    assert [p.name for p in out.iterdir()] == [pathlib.Path(rows[good]["wheel"]).name]


@pytest.mark.slow
def test_two_builds_from_different_paths_caches_and_times_give_identical_wheels(built):
    """Byte-reproducible wheels: a second cold build of the same row from a copy
    of the source at another (longer) path, with its own cache (so its own
    unpacked torch, its own objects) and its own output directory, minutes
    later, gives the same bytes; SOURCE_DATE_EPOCH sets every member's time and
    nothing else."""
    assert built["first"].returncode == 0
    tmp = built["tmp"]
    first = pathlib.Path(json.loads((tmp / "first.json").read_text())["rows"][0]["wheel"])
    other = tmp / "another" / "checkout-at-a-longer-path"
    shutil.copytree(tmp / "src", other / "src")
    cache, out = other / "cache2", other / "dist2"

    def build(extra_env, json_name):
        base = list(built["base"])
        for flag, value in (("--source-dir", other / "src"), ("--cache-dir", cache), ("--out", out)):
            base[base.index(flag) + 1] = str(value)
        env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"} | extra_env
        r = subprocess.run(base + ["--json", str(other / json_name)], capture_output=True, text=True,
                           cwd=other, env=env, timeout=1800)
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
        return json.loads((other / json_name).read_text())["rows"][0]

    row = build({}, "cold.json")
    assert row["kernels_cached"] == 0, "the second build must compile everything again"
    second = pathlib.Path(row["wheel"])
    assert second.name == first.name and second.parent == out
    if first.read_bytes() != second.read_bytes():
        z1, z2 = zipfile.ZipFile(first), zipfile.ZipFile(second)
        differ = [n for n in z1.namelist() if n not in z2.namelist() or z1.read(n) != z2.read(n)]
        pytest.fail(f"the wheels differ; members with other bytes: {differ}")
    so = zipfile.ZipFile(second).read("sageattention/_C.abi3.so")
    assert str(other).encode() not in so and b"site-packages" not in so and b"tmpxft_" not in so

    # SOURCE_DATE_EPOCH: the same members and bytes, each dated that time.
    epoch = 1700000000  # 2023-11-14 22:13:20 UTC
    build({"SOURCE_DATE_EPOCH": str(epoch)}, "dated.json")
    z1, z2 = zipfile.ZipFile(first), zipfile.ZipFile(second)
    assert [i.date_time for i in z2.infolist()] == [(2023, 11, 14, 22, 13, 20)] * len(z2.infolist())
    assert z1.namelist() == z2.namelist() and all(z1.read(n) == z2.read(n) for n in z1.namelist())
