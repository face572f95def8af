"""The sagebuild tool wheel (`sagebuild package-self`): real pip into fresh
venvs.  The Linux wheel is scripts/build-sagebuild-static.sh's (a static
executable; scripts/test.sh builds it); the dev build's wheel is refused by
its own verify, which is tested too.  The Windows wheel is tested under wine
(CTest: "windows: the tool wheel ...")."""
import os
import zipfile

import pytest

from helpers import ROOT, check, run, sagebuild_binary, tool_wheel, venv


@pytest.fixture(scope="module")
def wheel():
    w = tool_wheel()
    if w is None or not w.exists():
        pytest.skip("no tool wheel: scripts/build-sagebuild-static.sh writes dist-tool/sagebuild-*.whl "
                    "(scripts/test.sh runs it)")
    return w


def test_tool_wheel_layout_and_tag(wheel):
    assert wheel.name.startswith("sagebuild-0.1.0-py3-none-manylinux_")
    names = zipfile.ZipFile(wheel).namelist()
    assert "sagebuild-0.1.0.data/scripts/sagebuild" in names
    assert "sagebuild/__init__.py" in names
    info = zipfile.ZipFile(wheel).getinfo("sagebuild-0.1.0.data/scripts/sagebuild")
    assert (info.external_attr >> 16) & 0o111, "the executable is not executable"
    # It passes verify (the wheel's ELF executable is read like a library).
    check([sagebuild_binary(), "verify", wheel])


def test_tool_wheel_executable_is_static(wheel, tmp_path):
    exe = tmp_path / "sagebuild"
    exe.write_bytes(zipfile.ZipFile(wheel).read("sagebuild-0.1.0.data/scripts/sagebuild"))
    dyn = run(["readelf", "-d", "-l", exe]).stdout
    assert "INTERP" not in dyn and "(NEEDED)" not in dyn, dyn[:2000]


def test_tool_wheel_installs_into_a_fresh_venv_and_runs(wheel, tmp_path):
    py = venv(tmp_path / "venv")
    check([py, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", wheel])
    # On PATH once the venv's bin is (an activated venv), with an empty environment otherwise.
    env = {"PATH": f"{tmp_path / 'venv/bin'}:/usr/bin:/bin"}
    r = check(["sagebuild", "--version"], env=env)
    assert r.stdout.strip() == "sagebuild 0.1.0"
    # The backend module imports, and finds the executable beside the venv's Python.
    r = check([py, "-c", "import sagebuild, os; print(sagebuild._executable())"], env=env)
    assert os.path.samefile(r.stdout.strip(), tmp_path / "venv/bin/sagebuild")
    # It runs a real command from there: the matrix.
    r = check(["sagebuild", "matrix"], env=env, cwd=ROOT)
    assert "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64" in r.stdout


def test_a_dynamically_linked_sagebuild_is_refused(tmp_path):
    """The ordinary build links Debian's shared libzip and fmt, which no
    manylinux policy allows: package-self refuses, names the libraries and
    the static build, and writes nothing."""
    ldd = run(["ldd", sagebuild_binary()]).stdout
    if "libzip" not in ldd:
        pytest.skip("this sagebuild links no shared libzip")
    r = run([sagebuild_binary(), "package-self", "--out", tmp_path])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no manylinux level fits" in r.stderr and "needs libyaml-cpp.so" in r.stderr
    assert "scripts/build-sagebuild-static.sh" in r.stderr
    assert list(tmp_path.iterdir()) == []
