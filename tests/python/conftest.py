"""Which sageattention the Python-layer tests import, said out loud.

The tests marked ``needs_ext`` run the dense and varlen calls end to end on
meta tensors through the fake (meta) kernels, which needs the extension
``sageattention._C`` loaded (its import registers the ops; no GPU needed).
Where it comes from, in this order:

1. ``SAGE_TEST_WHEEL=path/to/sageattention-*.whl``: that wheel, unpacked into a
   temporary site directory (what users get; e.g. the coordinator's dist/).
2. ``python/sageattention/_C*.so`` in the tree (``kernels/tools/build_ext.py``).
3. ``SAGE_TEST_BUILD=1``: sagebuild builds the default row's wheel for one arch
   (9.0: every kernel family) first; this compiles CUDA kernels (minutes; the cache makes reruns
   quick).  A failed build stops the run with its output.
4. None of these: the tree without the extension (``needs_ext`` tests skip with
   the reason and these options), or, in a copy of the tests without the tree,
   the sageattention on PYTHONPATH (the device scripts' installed wheel).

The report header names the source picked."""
import glob
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEV = ROOT / "python"
HOW = ("set SAGE_TEST_WHEEL=<a sageattention wheel>, or SAGE_TEST_BUILD=1 to build one with sagebuild, "
       "or build python/sageattention/_C.abi3.so with kernels/tools/build_ext.py")


def _unpack(wheel: pathlib.Path) -> pathlib.Path:
    site = pathlib.Path(tempfile.mkdtemp(prefix="sa-site-"))
    zipfile.ZipFile(wheel).extractall(site)
    return site


def _build_wheel() -> pathlib.Path:
    sagebuild = pathlib.Path(os.environ.get("SAGEBUILD", ROOT / "build/tools/sagebuild/cli/sagebuild"))
    if not sagebuild.exists():
        raise pytest.UsageError(f"SAGE_TEST_BUILD=1 but sagebuild is not at {sagebuild} (set SAGEBUILD or run "
                                "scripts/build-sagebuild.sh)")
    out = pathlib.Path(tempfile.mkdtemp(prefix="sa-wheel-"))
    sys.stderr.write(f"tests/python: building the extension with {sagebuild} (SAGE_TEST_BUILD=1) ...\n")
    r = subprocess.run([str(sagebuild), "--source-dir", str(ROOT), "--archs", "9.0", "--out", str(out),
                        "--no-smoke-test"], capture_output=True, text=True, cwd=ROOT, timeout=1200)
    wheels = glob.glob(str(out / "*.whl"))
    if r.returncode != 0 or not wheels:
        raise pytest.UsageError("SAGE_TEST_BUILD=1: sagebuild could not build the extension (exit "
                                f"{r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-1000:]}")
    return pathlib.Path(wheels[0])


def _source():
    """(directory to import sageattention from, what it is)."""
    wheel = os.environ.get("SAGE_TEST_WHEEL")
    if wheel:
        if not pathlib.Path(wheel).is_file():
            raise pytest.UsageError(f"SAGE_TEST_WHEEL={wheel}: no such file")
        return _unpack(pathlib.Path(wheel)), f"the wheel {wheel}"
    if glob.glob(str(DEV / "sageattention" / "_C*.so")):
        return DEV, "the tree, with its built extension"
    if os.environ.get("SAGE_TEST_BUILD") == "1":
        wheel = _build_wheel()
        return _unpack(wheel), f"a wheel built now ({wheel.name})"
    if (DEV / "sageattention").is_dir():
        return DEV, "the tree, without the extension (" + HOW + ")"
    return None, "the importable installation (no tree beside the tests)"


SITE, SOURCE = _source()
if SITE is not None:
    sys.path.insert(0, str(SITE))
    # A test directory collected before this one (tests/gpu puts python/ on
    # sys.path) may have imported sageattention from elsewhere: forget it, so
    # the tests here import the one picked above.
    for name in [m for m in sys.modules if m == "sageattention" or m.startswith("sageattention.")]:
        origin = getattr(sys.modules[name], "__file__", None) or ""
        if not pathlib.Path(origin).resolve().is_relative_to(pathlib.Path(SITE).resolve()):
            del sys.modules[name]


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_ext: needs sageattention._C loaded (the fake kernels run on meta "
                                       "tensors; no GPU)")


def pytest_report_header(config):
    return f"sageattention from {SOURCE}"


def pytest_collection_modifyitems(config, items):
    try:
        import sageattention
    except ImportError:  # without torch the test modules skip themselves
        return
    err = sageattention.extension_error()
    if err is None:
        return
    skip = pytest.mark.skip(reason=f"sageattention._C not loadable ({type(err).__name__}: {err}); {HOW}")
    for item in items:
        if "needs_ext" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def fresh_log():
    """patch_sdpa's once-only log lines cleared for one test, and restored after it."""
    from sageattention import sdpa_patch

    saved = set(sdpa_patch._LOGGED)
    sdpa_patch._LOGGED.clear()
    yield
    sdpa_patch._LOGGED.clear()
    sdpa_patch._LOGGED.update(saved)
