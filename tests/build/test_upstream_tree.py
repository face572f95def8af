"""`sagebuild build --source-dir <upstream checkout>`: upstream SageAttention
2.2's own tree (../shared/anchors/upstream-sageattention/src, thu-ml at
d1a57a5) built by sagebuild for one arch (8.0: `_qattn_sm80` and `_fused`, as
upstream's setup.py builds for TORCH_CUDA_ARCH_LIST=8.0) and one torch, the
one this Python has; verified by sagebuild (SASS for sm_80 in both modules, no
foreign undefined symbols), installed with real pip into a fresh venv and
imported there on this CPU machine.

Skips without ../shared (CI's clean clone), without nvcc 13.0, or without
torch 2.11.0 in this Python.  About 9 minutes on this 2-core machine
(2026-11-24), almost all of it nvcc on qk_int_sv_f16_cuda_sm80.cu.
"""
import json
import re
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

from test_build_e2e import cuda_13_home, pypi_reachable, sagebuild_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
UPSTREAM = ROOT.parent / "shared" / "anchors" / "upstream-sageattention" / "src"
PY = f"cp{sys.version_info.major}{sys.version_info.minor}"
ROW = f"upstream-sageattention-2.2.0-torch2.11.0-cu130-{PY}-linux_x86_64"


def torch_211():
    try:
        import torch
    except ImportError:
        return False
    return torch.__version__.split("+")[0] == "2.11.0"


def cuda_library_headers(cuda_home):
    """Whether the CUDA the build takes (cuda_13_home(): CUDA_HOME, /usr/local/cuda or nvcc's on
    PATH) or the system include path has cuSPARSE's header: upstream's csrc/fused/fused.cu includes
    <ATen/cuda/CUDAContext.h>, which includes cusparse.h, cublas_v2.h and cusolverDn.h. A full
    toolkit has them; the CUDA sagebuild assembles from PyPI does not, and
    matrix/sources/upstream-sageattention.yaml does not declare `cuda_libraries` yet (sageattn3's
    does): its CUDA 12.4/12.6 rows have no pins to provision them from."""
    root = pathlib.Path(cuda_home)
    dirs = [pathlib.Path("/usr/include"), pathlib.Path("/usr/local/include"), root / "include",
            *root.glob("targets/*/include")]
    return any((d / "cusparse.h").exists() for d in dirs)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not UPSTREAM.is_dir():
        pytest.skip(f"{UPSTREAM} is absent (../shared holds upstream's tree)")
    cuda_home = cuda_13_home()
    if cuda_home is None:
        pytest.skip("no CUDA 13.0 nvcc here")
    if not cuda_library_headers(cuda_home):
        pytest.skip("known gap: the CUDA here has no cuSPARSE/cuBLAS headers, which upstream's fused.cu "
                    "includes through ATen/cuda/CUDAContext.h, and upstream-sageattention.yaml does not "
                    "provision them (cuda_libraries) yet")
    if not torch_211():
        pytest.skip("this Python has no torch 2.11.0 to build against and import with")
    tmp = tmp_path_factory.mktemp("upstream")
    cmd = [str(sagebuild_binary()), "build", "--source-dir", str(UPSTREAM), "--matrix",
           str(ROOT / "matrix/build-matrix.yaml"), "--row", ROW, "--archs", "8.0", "--python", sys.executable,
           "--jobs", "2", "--cache-dir", str(tmp / "cache"), "--out", str(tmp / "dist"), "--launcher", "none",
           "--json", str(tmp / "build.json")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=3000)
    return {"tmp": tmp, "run": r}


@pytest.mark.slow
def test_upstream_tree_builds_a_verified_wheel_that_imports(built):
    r = built["run"]
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]
    assert "families _qattn_sm80 _fused (skipped: _qattn_sm89" in r.stdout
    row = json.loads((built["tmp"] / "build.json").read_text())["rows"][0]
    wheel = pathlib.Path(row["wheel"])
    # The platform tag is the manylinux level the binaries satisfy on this
    # host (verify's derivation); the row's platform_tag reads "TAG, why".
    tag = row["platform_tag"].split(",", 1)[0]
    assert re.fullmatch(r"manylinux_2_\d+_x86_64", tag), row["platform_tag"]
    assert wheel.name == f"sageattention-2.2.0-21100.130-{PY}-{PY}-{tag}.whl"
    # sagebuild's own smoke test imported the package and both modules.
    assert row["smoke"].startswith("imported 2 module(s)"), row["smoke"]
    z = zipfile.ZipFile(wheel)
    names = z.namelist()
    suffix = f".cpython-{PY[2:]}-x86_64-linux-gnu.so"
    for module in ("_qattn_sm80", "_fused"):
        assert f"sageattention/{module}{suffix}" in names
    assert f"sageattention/_qattn_sm90{suffix}" not in names
    assert "sageattention/core.py" in names and "sageattention/triton/quant_per_block.py" in names
    info = json.loads(z.read("sageattention/build_info.json"))
    assert info["archs"] == ["8.0"] and info["ptx_archs"] == []
    assert info["kernel_families"]["_qattn_sm80"] == {"archs": ["8.0"], "symbol_marker": "qk_int_sv_f16_attn_kernel"}
    meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta and "Requires-Dist: torch==2.11.*" in meta


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_venv_and_imports_without_a_gpu(built):
    assert built["run"].returncode == 0
    tmp = built["tmp"]
    wheel = next((tmp / "dist").glob("*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    code = ("import sageattention, sageattention._qattn_sm80 as m, sageattention._fused as f, torch\n"
            "assert not torch.cuda.is_available()\n"
            "print(sageattention.__file__, hasattr(m, 'qk_int8_sv_f16_accum_f32_attn'), hasattr(f, 'sub_mean_cuda'))")
    r = subprocess.run([py, "-c", code], capture_output=True, text=True, cwd=tmp)
    assert r.returncode == 0, r.stderr[-3000:]
    where, sm80, fused = r.stdout.split()
    assert where.startswith(str(venv)) and sm80 == "True" and fused == "True"


SAGE3_PYTHON = os.environ.get("SAGEBUILD_SAGEATTN3_PYTHON", "")


@pytest.mark.slow
def test_sageattn3_builds_for_one_blackwell_arch_with_cutlass_from_pypi(tmp_path):
    """sageattn3 (upstream's sageattention3_blackwell/) for 10.0a: CUTLASS's
    headers from the pinned nvidia-cutlass wheel, SASS for sm_100a in both
    modules (verify), imported on this CPU machine (CUDA's stub standing in for
    the driver that fp4attn_cuda links).  Needs a Python >= 3.12 with torch
    2.11.0 in $SAGEBUILD_SAGEATTN3_PYTHON (sageattn3 serves 3.12 and later) and
    PyPI; about 10 minutes of nvcc on 2 cores, 10 GiB of memory."""
    if not UPSTREAM.is_dir():
        pytest.skip(f"{UPSTREAM} is absent (../shared holds upstream's tree)")
    if not SAGE3_PYTHON:
        pytest.skip("set SAGEBUILD_SAGEATTN3_PYTHON to a Python >= 3.12 with torch 2.11.0")
    if cuda_13_home() is None:
        pytest.skip("no CUDA 13.0 nvcc here")
    if not pypi_reachable():
        pytest.skip("PyPI is not reachable: nvidia-cutlass cannot be provisioned")
    tag = subprocess.run([SAGE3_PYTHON, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"],
                         capture_output=True, text=True, check=True).stdout.strip()
    row = f"sageattn3-1.0.0-torch2.11.0-cu130-{tag}-linux_x86_64"
    r = subprocess.run([str(sagebuild_binary()), "build", "--source-dir", str(UPSTREAM), "--matrix",
                        str(ROOT / "matrix/build-matrix.yaml"), "--row", row, "--archs", "10.0a", "--python",
                        SAGE3_PYTHON, "--jobs", "2", "--cache-dir", str(tmp_path / "cache"), "--out",
                        str(tmp_path / "dist"), "--launcher", "none", "--json", str(tmp_path / "b.json")],
                       capture_output=True, text=True, cwd=tmp_path, timeout=3600)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]
    assert "nvidia-cutlass 4.2.0.0 headers" in r.stdout
    result = json.loads((tmp_path / "b.json").read_text())["rows"][0]
    assert result["smoke"].startswith("imported 2 module(s)"), result["smoke"]
    z = zipfile.ZipFile(result["wheel"])
    names = z.namelist()
    assert any(n.startswith("fp4attn_cuda.cpython-") for n in names)
    assert "sageattn3/api.py" in names and not any(n.endswith((".cu", ".h")) for n in names)
    info = json.loads(z.read("sageattn3/build_info.json"))
    assert info["kernel_families"]["fp4attn_cuda"]["archs"] == ["10.0a"]
