"""Where the tests import sageattention from.

The dev tree (python/) comes first when it holds a built extension (a
developer's `kernels/tools/build_ext.py`).  Otherwise, where sagebuild and nvcc
are at hand (CI), the extension is built the way users get it: sagebuild
builds the default row's wheel (one arch, 8.0, to stay quick; the cache makes
reruns instant), the wheel is unpacked into a temporary site directory, and
the tests import that.  Loading the extension needs no GPU: its import
registers the ops, and the fake (meta) kernels run on the CPU."""
import glob
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEV = ROOT / "python"


def _built_wheel_site():
    sagebuild = pathlib.Path(os.environ.get("SAGEBUILD", ROOT / "build/tools/sagebuild/cli/sagebuild"))
    if not sagebuild.exists() or shutil.which("nvcc") is None and not pathlib.Path("/usr/local/cuda/bin/nvcc").exists():
        return None
    try:
        import torch  # noqa: F401  (without torch these tests skip anyway)
    except ImportError:
        return None
    out = pathlib.Path(tempfile.mkdtemp(prefix="sa-wheel-"))
    r = subprocess.run([str(sagebuild), "--source-dir", str(ROOT), "--archs", "8.0", "--out", str(out),
                        "--no-smoke-test"], capture_output=True, text=True, cwd=ROOT, timeout=1200)
    wheels = glob.glob(str(out / "*.whl"))
    if r.returncode != 0 or not wheels:
        sys.stderr.write("tests/python: sagebuild could not build the extension; the tests that need it "
                         "will skip:\n" + r.stdout[-2000:] + r.stderr[-1000:])
        return None
    site = pathlib.Path(tempfile.mkdtemp(prefix="sa-site-"))
    zipfile.ZipFile(wheels[0]).extractall(site)
    return site


if glob.glob(str(DEV / "sageattention" / "_C*.so")):
    sys.path.insert(0, str(DEV))
else:
    _site = _built_wheel_site()
    sys.path.insert(0, str(_site if _site else DEV))
