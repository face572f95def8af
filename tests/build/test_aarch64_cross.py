"""The Linux aarch64 default row cross-built on this x86_64 host:
`sagebuild --profile default-aarch64 --archs 9.0` with the host's nvcc 13.0,
aarch64-linux-gnu-g++ (Debian's g++-aarch64-linux-gnu, which
scripts/install-deps.sh installs), CUDA's aarch64 headers and libcudart_static
from NVIDIA's aarch64 wheels and torch 2.11.0's aarch64 wheel, unpacked.
Nothing aarch64 runs here (scripts/aarch64-smoke.sh imports it under qemu).

Needs: $SAGEBUILD (or build*/tools/sagebuild/cli/sagebuild), nvcc 13.0 and
aarch64-linux-gnu-g++.  torch's aarch64 wheel (~400 MiB) comes from
$SAGEBUILD_AARCH64_TORCH_WHEEL when that file exists, else sagebuild downloads
it from PyPI as a user's build would.
"""
import os
import pathlib
import re
import shutil
import struct
import subprocess
import zipfile

import pytest

from test_build_e2e import cuda_13_home, sagebuild_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
TORCH_WHEEL = pathlib.Path(os.environ.get(
    "SAGEBUILD_AARCH64_TORCH_WHEEL", "/tmp/torchwhl/torch-2.11.0-cp312-cp312-manylinux_2_28_aarch64.whl"))
EM_AARCH64 = 183


def elf_machine(data):
    assert data[:4] == b"\x7fELF", "not an ELF file"
    assert data[4] == 2 and data[5] == 1, "not a 64-bit little-endian ELF"
    return struct.unpack_from("<H", data, 18)[0]


def aarch64_pyconfig_missing():
    """Why the binding cannot compile for aarch64 with python3's headers, or "".
    Debian's python3-dev ships a multiarch pyconfig.h that includes
    <aarch64-linux-gnu/python3.X/pyconfig.h> when the compiler targets aarch64;
    only libpython3.X-dev:arm64 (dpkg --add-architecture arm64) installs that file.
    A Python with one pyconfig.h (pyenv's, python.org's) needs nothing more."""
    r = subprocess.run(["python3", "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                       capture_output=True, text=True)
    include = pathlib.Path(r.stdout.strip())
    pyconfig = include / "pyconfig.h"
    if r.returncode != 0 or not pyconfig.exists():
        return ""
    m = re.search(r"include <(aarch64-linux-gnu/python[0-9.]+/pyconfig\.h)>", pyconfig.read_text(errors="replace"))
    if not m or (include.parent / m.group(1)).exists():
        return ""
    return (f"{pyconfig} is Debian's multiarch header and {include.parent / m.group(1)} is missing: "
            f"the aarch64 binding cannot include Python.h (install libpython3-dev:arm64 after "
            f"dpkg --add-architecture arm64, or put a Python with one pyconfig.h, e.g. pyenv's, first on PATH)")


@pytest.fixture(scope="module")
def cross_wheel(tmp_path_factory):
    if shutil.which("aarch64-linux-gnu-g++") is None:
        pytest.skip("aarch64-linux-gnu-g++ is not installed (Debian's g++-aarch64-linux-gnu; "
                    "scripts/install-deps.sh installs it)")
    home = cuda_13_home()
    if home is None:
        pytest.skip("no CUDA 13.0 nvcc here ($CUDA_HOME, /usr/local/cuda or PATH)")
    missing = aarch64_pyconfig_missing()
    if missing:
        pytest.skip(missing)
    exe = sagebuild_binary()
    tmp = tmp_path_factory.mktemp("aarch64")
    out = tmp / "dist"
    cmd = [str(exe), "--profile", "default-aarch64", "--archs", "9.0", "--cache-dir", str(tmp / "cache"),
           "--launcher", "none", "--out", str(out)]
    if TORCH_WHEEL.exists():
        cmd += ["--torch-wheel", str(TORCH_WHEEL)]
    env = dict(os.environ, CUDA_HOME=home)
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=3600)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    wheels = sorted(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return exe, wheels[0], r.stdout


def test_the_wheel_is_named_for_manylinux_aarch64(cross_wheel):
    _, wheel, log = cross_wheel
    assert re.fullmatch(r"sageattention-2\.2\.0-21100\.130-cp310-abi3-manylinux_2_\d+_aarch64\.whl", wheel.name)
    # The level is derived from the binary's symbols, as for x86_64.
    assert "the oldest level the binaries satisfy" in log


def test_the_extension_is_an_aarch64_elf(cross_wheel):
    _, wheel, _ = cross_wheel
    with zipfile.ZipFile(wheel) as z:
        so = [n for n in z.namelist() if n.endswith(".so")]
        assert so == ["sageattention/_C.abi3.so"]
        assert elf_machine(z.read(so[0])) == EM_AARCH64


def test_verify_passes(cross_wheel):
    exe, wheel, _ = cross_wheel
    r = subprocess.run([str(exe), "verify", str(wheel)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK (0 errors" in r.stdout
    assert "aarch64" in r.stdout
    assert re.search(r"archs: 9\.0\b", r.stdout)
