"""sagebuild's PEP 517 build backend: a thin layer over the sagebuild executable.

Every hook runs the executable; nothing here builds, packs or decides anything
itself.  In a project's pyproject.toml:

    [build-system]
    requires = ["sagebuild"]
    build-backend = "sagebuild"

This repository names it in-tree (backend-path), so a checkout needs no index.

    build_wheel      sagebuild build --for-python <this Python> --out DIR: the row
                     of the matrix for this environment (its Python, its torch and
                     torch's CUDA), archs from TORCH_CUDA_ARCH_LIST, else the GPU,
                     else the package's; built, packed and verified
    build_sdist      sagebuild sdist --out DIR
    prepare_metadata_for_build_wheel
                     builds the wheel (build_wheel then reuses it) and returns its
                     .dist-info: the metadata is the wheel's own, never guessed
    get_requires_for_build_wheel / _sdist
                     nothing: the wheel is built against the torch already
                     installed here, so pip must not isolate the build
                     (pip install --no-build-isolation .)

No build_editable: the extension is compiled into a wheel and verified; an
editable install of it would be neither.

The executable: $SAGEBUILD, else the one installed beside this Python (the
sagebuild wheel puts it into the scripts directory), else `sagebuild` on PATH,
else this checkout's build (build/tools/sagebuild/cli/sagebuild).

config_settings: {"sagebuild-args": "--jobs 4 --cuda-home /usr/local/cuda"}
adds options to `sagebuild build` (pip: -C sagebuild-args="...").
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

__all__ = [
    "build_wheel",
    "build_sdist",
    "prepare_metadata_for_build_wheel",
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
]

_EXE = "sagebuild.exe" if os.name == "nt" else "sagebuild"
# prepare_metadata_for_build_wheel leaves the wheel it built here, inside the
# metadata directory pip gives it, for build_wheel to reuse.
_PREPARED = ".sagebuild-wheel"


def _executable():
    env = os.environ.get("SAGEBUILD")
    if env:
        if not os.path.isfile(env):
            raise SystemExit("sagebuild: error: $SAGEBUILD names %s, which does not exist" % env)
        return env
    candidates = [
        os.path.join(sysconfig.get_path("scripts"), _EXE),
        shutil.which("sagebuild"),
        os.path.join(os.getcwd(), "build", "tools", "sagebuild", "cli", _EXE),
    ]
    for c in candidates:
        if c and os.path.isfile(c):
            return c
    raise SystemExit(
        "sagebuild: error: no sagebuild executable found (not $SAGEBUILD, not beside %s, not on PATH, not in "
        "./build): install the tool wheel (pip install sagebuild) or, in a checkout, run "
        "bash scripts/build-sagebuild.sh" % sys.executable
    )


def _run(args):
    # sagebuild prints its own one-line errors; the hook then ends with its code.
    rc = subprocess.call([_executable()] + args)
    if rc != 0:
        raise SystemExit("sagebuild: %s failed (exit %d); its message is above" % (args[0], rc))


def _extra_args(config_settings):
    value = (config_settings or {}).get("sagebuild-args", "")
    if isinstance(value, list):
        value = " ".join(value)
    return shlex.split(value)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if metadata_directory:
        prepared = os.path.join(metadata_directory, _PREPARED)
        if os.path.isdir(prepared):
            for name in os.listdir(prepared):
                if name.endswith(".whl"):
                    shutil.copyfile(os.path.join(prepared, name), os.path.join(wheel_directory, name))
                    return name
    with tempfile.TemporaryDirectory(prefix="sagebuild-") as tmp:
        result = os.path.join(tmp, "result.json")
        _run(["build", "--for-python", sys.executable, "--out", wheel_directory, "--no-smoke-test",
              "--json", result] + _extra_args(config_settings))
        with open(result, encoding="utf-8") as f:
            rows = json.load(f)["rows"]
    return os.path.basename(rows[0]["wheel"])


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    prepared = os.path.join(metadata_directory, _PREPARED)
    os.makedirs(prepared, exist_ok=True)
    name = build_wheel(prepared, config_settings)
    with zipfile.ZipFile(os.path.join(prepared, name)) as whl:
        dist_info = {m.split("/", 1)[0] for m in whl.namelist() if m.split("/", 1)[0].endswith(".dist-info")}
        (top,) = dist_info
        for member in whl.namelist():
            if member.startswith(top + "/"):
                whl.extract(member, metadata_directory)
    return top


def build_sdist(sdist_directory, config_settings=None):
    out = subprocess.run([_executable(), "sdist", "--out", sdist_directory], stdout=subprocess.PIPE,
                         universal_newlines=True)
    sys.stdout.write(out.stdout)
    if out.returncode != 0:
        raise SystemExit("sagebuild: sdist failed (exit %d); its message is above" % out.returncode)
    return os.path.basename(out.stdout.strip().splitlines()[-1])
