"""What the pep517 tests share: where sagebuild and its tool wheel are, fresh
venvs, the source tree a user's checkout would be."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What `sagebuild sdist` holds (tools/sagebuild/pep517/sdist.h), for the
# checkout copies `pip install .` builds from.
CHECKOUT_DIRS = ("kernels", "matrix", "python", "tools/sagebuild/pep517/backend")
CHECKOUT_FILES = ("pyproject.toml", "LICENSE", "README.md")


def sagebuild_binary():
    env = os.environ.get("SAGEBUILD")
    if env and pathlib.Path(env).exists():
        return pathlib.Path(env)
    p = ROOT / "build/tools/sagebuild/cli/sagebuild"
    if p.exists():
        return p
    pytest.skip("sagebuild is not built (set $SAGEBUILD)")


def tool_wheel():
    """The Linux tool wheel scripts/build-sagebuild-static.sh writes
    ($SAGEBUILD_TOOL_WHEEL, else dist-tool/sagebuild-*.whl), or None."""
    env = os.environ.get("SAGEBUILD_TOOL_WHEEL")
    if env:
        return pathlib.Path(env)
    found = sorted((ROOT / "dist-tool").glob("sagebuild-*-py3-none-manylinux_*_x86_64.whl"))
    return found[-1] if found else None


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    r = subprocess.run([str(c) for c in cmd], **kw)
    return r


def check(cmd, **kw):
    r = run(cmd, **kw)
    assert r.returncode == 0, f"{cmd} exited {r.returncode}:\n{r.stdout[-6000:]}\n{r.stderr[-4000:]}"
    return r


def venv(path, system_site_packages=False):
    """A fresh venv made by this Python; returns its interpreter."""
    cmd = [sys.executable, "-m", "venv", str(path)]
    if system_site_packages:
        cmd.insert(3, "--system-site-packages")
    check(cmd)
    return path / "bin/python"


def checkout_copy(dest):
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    for d in CHECKOUT_DIRS:
        shutil.copytree(ROOT / d, dest / d, ignore=ignore)
    for f in CHECKOUT_FILES:
        shutil.copy(ROOT / f, dest / f)
    return dest
