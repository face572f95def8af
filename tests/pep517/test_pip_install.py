"""`pip install --no-build-isolation .` and the sdist route, for real: pip
runs sagebuild's PEP 517 backend (pyproject.toml, backend-path), which runs
`sagebuild build --for-python <the venv's python>`: the row for that
environment's Python and torch, compiled with nvcc, packed, verified, then
installed by pip and imported with its extension loaded (its ops registered)
on this CPU machine.  TORCH_CUDA_ARCH_LIST=8.0 keeps the compile to the 8.0
families (a few minutes on 2 cores); the routes share one sagebuild cache,
build/test-cache/sagebuild (tests/ci's release wheel uses it too), so only
the first build of a checkout compiles.

Needs: torch with CUDA in python3 (scripts/install-deps.sh: 2.11.0+cu130),
nvcc 13.0 (else sagebuild provisions it from PyPI), the tool wheel
(dist-tool/, scripts/build-sagebuild-static.sh) or $SAGEBUILD.
"""
import os
import sys
import tarfile

import pytest

from helpers import ROOT, check, run, sagebuild_binary, tool_wheel, venv, checkout_copy

IMPORT_CHECK = """
import sys, torch, sageattention, sageattention._C
ops = [o for o in torch._C._dispatch_get_all_op_names() if o.startswith("sageattention::")]
assert ops, "no sageattention::* ops registered"
info = sageattention.build_info()
print(sageattention.__file__, len(ops), info["torch"]["version"], info["cuda"]["version"], info["archs"])
"""


def torch_info():
    r = run([sys.executable, "-c", "import torch; print(torch.__version__, torch.version.cuda or '')"])
    if r.returncode != 0:
        pytest.skip("python3 has no torch (scripts/install-deps.sh installs it)")
    version, _, cuda = r.stdout.strip().splitlines()[-1].partition(" ")
    if not cuda:
        pytest.skip(f"python3's torch {version} is a CPU build")
    return version, cuda


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A user's venv that sees python3's torch, with sagebuild installed the
    way a user would (the tool wheel) or, without it, named by $SAGEBUILD."""
    torch_info()
    tmp = tmp_path_factory.mktemp("pep517")
    py = venv(tmp / "venv", system_site_packages=True)
    e = dict(os.environ, XDG_CACHE_HOME=str(ROOT / "build/test-cache"), TORCH_CUDA_ARCH_LIST="8.0",
             PIP_DISABLE_PIP_VERSION_CHECK="1")
    e.pop("SAGEBUILD", None)
    w = tool_wheel()
    if w and w.exists():
        check([py, "-m", "pip", "install", "--no-index", w], env=e)
    else:
        e["SAGEBUILD"] = str(sagebuild_binary())
    # pip's own cache stays where it was: nothing is downloaded (--no-index).
    e["PIP_CACHE_DIR"] = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "pip")
    return {"tmp": tmp, "py": py, "env": e}


def installed_ok(env):
    r = check([env["py"], "-c", IMPORT_CHECK], env=env["env"], cwd=env["tmp"])
    path, n_ops, torch_version, cuda, archs = r.stdout.strip().splitlines()[-1].split(maxsplit=4)
    assert int(n_ops) > 0
    assert path.startswith(str(env["tmp"] / "venv")), path
    return torch_version, cuda, archs


@pytest.mark.slow
def test_pip_install_no_build_isolation_from_a_checkout(env):
    src = checkout_copy(env["tmp"] / "checkout")
    r = run([env["py"], "-m", "pip", "install", "-v", "--no-index", "--no-build-isolation", "."],
            env=env["env"], cwd=src, timeout=3000)
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-4000:]
    # pip -v shows the backend's output (sagebuild's log) on stderr.
    assert "archs from TORCH_CUDA_ARCH_LIST=\"8.0\"" in r.stderr, r.stderr[-3000:]
    assert "families pv_fp16 quant" in r.stderr
    torch_version, cuda = torch_info()
    assert installed_ok(env) == (torch_version.split("+")[0], cuda, "['8.0']")
    check([env["py"], "-m", "pip", "uninstall", "-y", "sageattention"], env=env["env"])


@pytest.mark.slow
def test_sdist_then_pip_install_the_sdist(env):
    src = checkout_copy(env["tmp"] / "checkout-sdist")
    dist = env["tmp"] / "sdist"
    # python -m build --sdist where `build` is installed, else the backend's hook directly.
    r = run([env["py"], "-m", "build", "--version"], env=env["env"])
    if r.returncode == 0:
        check([env["py"], "-m", "build", "--sdist", "--no-isolation", "--outdir", dist, src], env=env["env"])
    else:
        code = f"import sys; sys.path.insert(0, 'tools/sagebuild/pep517/backend'); import sagebuild; " \
               f"print(sagebuild.build_sdist({str(dist)!r}))"
        check([env["py"], "-c", code], env=env["env"], cwd=src)
    sdist = dist / "sageattention-2.2.0.tar.gz"
    assert sdist.exists(), list(dist.iterdir())
    with tarfile.open(sdist) as t:
        names = t.getnames()
    top = "sageattention-2.2.0/"
    for must in ("PKG-INFO", "pyproject.toml", "LICENSE", "matrix/build-matrix.yaml", "kernels/families.json",
                 "python/sageattention/__init__.py", "tools/sagebuild/pep517/backend/sagebuild/__init__.py"):
        assert top + must in names, must
    assert not [n for n in names if n.endswith((".cc", ".h")) and "/tools/sagebuild/" in n], "the tool's C++ sources"
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".so"))]
    r = run([env["py"], "-m", "pip", "install", "-v", "--no-index", "--no-build-isolation", sdist],
            env=env["env"], cwd=env["tmp"], timeout=3000)
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-4000:]
    torch_version, cuda = torch_info()
    assert installed_ok(env) == (torch_version.split("+")[0], cuda, "['8.0']")


def test_isolated_build_says_in_one_line_what_to_run(env):
    """Without --no-build-isolation pip builds in an environment without torch:
    the build stops before compiling anything, naming what to run."""
    src = checkout_copy(env["tmp"] / "checkout-isolated")
    r = run([env["py"], "-m", "pip", "install", "--no-index", "."], env=env["env"], cwd=src, timeout=600)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "no torch is importable there" in out and "pip install --no-build-isolation ." in out, out[-3000:]
    assert "toolchain..." not in out


def test_cpu_torch_is_refused_before_any_compile(env, tmp_path):
    """--for-python with a torch without CUDA: a clear error, nothing compiled."""
    fake = tmp_path / "site"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch/__init__.py").write_text(
        "__version__ = '2.11.0+cpu'\nclass version:\n    cuda = None\n"
        "class _C:\n    _GLIBCXX_USE_CXX11_ABI = True\n")
    py = venv(tmp_path / "cpu-venv")
    e = dict(env["env"], PYTHONPATH=str(fake))
    r = run([sagebuild_binary(), "build", "--for-python", py, "--out", tmp_path / "out"], env=e, cwd=ROOT)
    assert r.returncode == 2
    assert "CPU-only build; install a CUDA build of torch" in r.stderr, r.stderr
    assert "toolchain..." not in r.stdout
