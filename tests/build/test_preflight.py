"""`sagebuild doctor --row ID --preprocess`, the preflight a build job runs first: a
sageattn3 row's toolchain proven without compiling, with CUDA 13.0 from
PyPI only (sagebuild's own provisioning; never /usr/local/cuda, whose full
toolkit hides what PyPI's CUDA lacks).  Upstream's api.cu includes torch's
<ATen/cuda/CUDAContext.h>, which includes cusparse.h, cublas_v2.h, cublasLt.h
and cusolverDn.h: without the CUDA library headers the source manifest
declares (`cuda_libraries:`), the preflight fails in seconds naming the
header, the unit and the wheel that provides it; with them it passes.

Needs upstream's tree (../shared, or $SAGEBUILD_SHARED_DIR) and a Python
>= 3.12 with its headers (sageattn3 wheels are cp312+); downloads CUDA 13.0's
wheels and the cuBLAS/cuSPARSE/cuSOLVER wheels (~0.9 GB, from pip's cache
after the first run) and, when no Python here has torch 2.11.0 for CUDA
13.0, torch's wheel.
"""
import glob
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from test_build_e2e import pypi_reachable, sagebuild_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("SAGEBUILD_SHARED_DIR", ROOT.parent / "shared"))
UPSTREAM = SHARED / "anchors" / "upstream-sageattention" / "src"
UNIT = "sageattention3_blackwell/sageattn3/blackwell/api.cu"


def python_312_with_headers():
    """A CPython >= 3.12 with Python.h: on PATH (python3.12 ...), else pyenv's."""
    candidates = [shutil.which(f"python3.{m}") for m in (12, 13, 14)]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[234]*/bin/python3")))
    for exe in filter(None, candidates):
        r = subprocess.run([exe, "-c", "import sys, sysconfig, os; print(sys.version_info[1]); "
                            "print(os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))"],
                           capture_output=True, text=True)
        lines = r.stdout.split()
        if r.returncode == 0 and lines[1:] == ["True"]:
            return pathlib.Path(exe).resolve(), f"3.{lines[0]}"
    return None


def clean_env(python_dir):
    """No CUDA of this host: no CUDA_HOME, no directory with an nvcc on PATH; the
    Python >= 3.12 first on PATH (the row's own headers)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "CUDACXX")}
    path = [p for p in env.get("PATH", "").split(os.pathsep)
            if "cuda" not in p.lower() and not (pathlib.Path(p) / "nvcc").exists()]
    env["PATH"] = os.pathsep.join([str(python_dir)] + path)
    return env


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    if not UPSTREAM.is_dir():
        pytest.skip(f"{UPSTREAM} is absent (../shared holds upstream's tree)")
    found = python_312_with_headers()
    if not found:
        pytest.skip("no CPython >= 3.12 with its headers here: sageattn3 rows are cp312+")
    if not pypi_reachable():
        pytest.skip("PyPI is not reachable: CUDA's wheels cannot be provisioned")
    py312, version = found
    sb = sagebuild_binary()
    rows = json.loads(subprocess.run([str(sb), "matrix", "--profile", "sage3-all", "--format", "json"],
                                     capture_output=True, text=True, cwd=ROOT).stdout)["rows"]
    tag = "cp" + version.replace(".", "")
    rows = [r for r in rows if r["cuda"] == "13.0" and r["platform"] == "linux_x86_64" and f"-{tag}-" in r["id"]]
    if not rows:
        pytest.skip(f"the matrix has no sageattn3 CUDA 13.0 row for {tag}")
    # The torch this Python has, when a row is for it: no torch download.
    have = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__.split('+')[0])"],
                          capture_output=True, text=True).stdout.strip()
    row = next((r["id"] for r in rows if r["torch"] == have), rows[-1]["id"])
    tmp = tmp_path_factory.mktemp("preflight")
    return {"sb": sb, "row": row, "python_dir": py312.parent, "tmp": tmp, "cache": tmp / "cache"}


def doctor(setup, matrix):
    # --python: a Python that may have the row's torch already (saves its
    # download); the row's Python 3.12 headers come from PATH.
    cmd = [str(setup["sb"]), "doctor", "--row", setup["row"], "--preprocess", "--source-dir", str(UPSTREAM),
           "--matrix", str(matrix), "--python", sys.executable, "--cache-dir", str(setup["cache"])]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=setup["tmp"], env=clean_env(setup["python_dir"]),
                          timeout=3000)


@pytest.mark.slow
def test_without_the_cuda_library_headers_the_preflight_fails_naming_them(setup):
    # The repository's matrix and manifests, less the declaration of the
    # CUDA libraries: what the release workflow had before the manifests declared them.
    matrix = setup["tmp"] / "matrix"
    shutil.copytree(ROOT / "matrix", matrix, dirs_exist_ok=True)
    manifest = matrix / "sources" / "upstream-sageattn3.yaml"
    text = manifest.read_text()
    assert "\ncuda_libraries:" in text
    manifest.write_text("\n".join(l for l in text.split("\n") if not l.startswith("cuda_libraries:")))
    # A host whose compiler finds a full toolkit's headers by default (CPATH,
    # /usr/local/include) hides the failure: only a clean room shows it.
    probe = subprocess.run(["c++", "-E", "-x", "c++", "-"], input="#include <cusparse.h>\n", capture_output=True,
                           text=True, env=clean_env(setup["python_dir"]))
    if probe.returncode == 0:
        pytest.skip("this host's c++ finds cusparse.h on its default include path (a full CUDA toolkit)")
    r = doctor(setup, matrix / "build-matrix.yaml")
    out = r.stdout
    assert r.returncode == 1, out[-4000:] + r.stderr[-2000:]
    # CUDA came from PyPI, provisioned into the test's cache.
    assert "(provisioned)" in out or "cache (PyPI wheels)" in out, out[-4000:]
    assert "/usr/local/cuda" not in out
    # The first header torch's CUDAContextLight.h includes that PyPI's CUDA lacks.
    missing = [h for h in ("cusparse.h", "cublas_v2.h", "cublasLt.h", "cusolverDn.h")
               if f"{h}: no such file (included from " in out]
    assert missing, out[-4000:]
    lib = {"cusparse.h": "cusparse", "cublas_v2.h": "cublas", "cublasLt.h": "cublas", "cusolverDn.h": "cusolver"}
    assert f"provided by the nvidia-{lib[missing[0]]} wheel (CUDA 13.0" in out, out[-4000:]
    assert f"(unit {UNIT})" in out
    assert f"\u2717 {setup['row']}: 2 of 2 unit(s) fail; missing {missing[0]}" in out, out[-2000:]


@pytest.mark.slow
def test_with_the_declared_cuda_library_headers_the_preflight_passes(setup):
    r = doctor(setup, ROOT / "matrix" / "build-matrix.yaml")
    out = r.stdout
    assert r.returncode == 0, out[-4000:] + r.stderr[-2000:]
    for req in ("nvidia-cublas 13.1.1.3 headers", "nvidia-cusparse 12.6.3.3 headers",
                "nvidia-cusolver 12.0.4.66 headers"):
        assert req in out, out[-4000:]
    assert f"\u2713 {setup['row']}: 2 unit(s) preprocessed (nvcc 13.0." in out, out[-2000:]
    assert "/usr/local/cuda" not in out
