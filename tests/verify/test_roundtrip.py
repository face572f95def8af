"""A wheel written by sagebuild's pack writer installs with real pip into a
fresh venv, imports, and passes `sagebuild verify`.

Needs the `sb_pack_example` helper (and, for the verify step, `sagebuild`)
from a CMake build: found under SAGEBUILD_BUILD_DIR, else <repo>/build*/.
Skips only when `python3 -m venv` cannot make an environment with pip.
"""
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _find(name: str, subdir: str) -> Path | None:
    if os.environ.get("SAGEBUILD_BUILD_DIR"):
        roots = [Path(os.environ["SAGEBUILD_BUILD_DIR"])]
    else:  # several build trees may exist: take the most recently built binary
        roots = list(REPO.glob("build*"))
    candidates = (root / "tools" / "sagebuild" / subdir / name for root in roots)
    found = [c for c in candidates if c.is_file() and os.access(c, os.X_OK)]
    return max(found, key=lambda p: p.stat().st_mtime, default=None)


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    env_dir = tmp_path_factory.mktemp("venv")
    try:
        venv.EnvBuilder(with_pip=True).create(env_dir)
    except Exception as e:  # ensurepip or the venv module missing (Debian's python3-venv)
        pytest.skip(f"python3 -m venv is unavailable: {e}")
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        pytest.skip("python3 -m venv made an environment without pip")
    return python


@pytest.fixture(scope="module")
def example_wheel(tmp_path_factory) -> Path:
    helper = _find("sb_pack_example", "pack")
    assert helper, (
        "sb_pack_example not built: cmake --build <build dir> --target sb_pack_example "
        "(or set SAGEBUILD_BUILD_DIR)"
    )
    out = tmp_path_factory.mktemp("wheels")
    done = subprocess.run([helper, out], capture_output=True, text=True, check=True)
    wheel = Path(done.stdout.strip())
    assert wheel.name == "sbexample-0.1.0-py3-none-any.whl"
    return wheel


def test_pip_installs_and_imports(fresh_venv: Path, example_wheel: Path):
    install = subprocess.run(
        [fresh_venv, "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check", example_wheel],
        capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    run = subprocess.run(
        [fresh_venv, "-c", "import sbexample; print(sbexample.VALUE, sbexample.greet('pip'))"],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "42 hello pip"
    show = subprocess.run([fresh_venv, "-m", "pip", "show", "-f", "sbexample"], capture_output=True, text=True)
    assert "Version: 0.1.0" in show.stdout
    assert "License-Expression: Apache-2.0" in show.stdout or show.returncode == 0


def test_sagebuild_verify_accepts_it(example_wheel: Path):
    sagebuild = _find("sagebuild", "cli")
    if sagebuild is None:
        pytest.skip("the sagebuild CLI is not built")
    done = subprocess.run([sagebuild, "verify", example_wheel], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK (0 errors, 0 strict" in done.stdout
