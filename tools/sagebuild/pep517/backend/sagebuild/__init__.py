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
adds options to `sagebuild build` (pip: -C sagebuild-args="...").  A setting
that cannot be options (an unbalanced quote, a NUL, over 64 KiB, not text)
ends the hook with one line saying so, never a traceback.

build_wheel reuses the wheel prepare_metadata_for_build_wheel built only when
it is that file (its name and SHA-256 recorded beside it); anything else in
the metadata directory is ignored and the wheel is built.
"""

import hashlib
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
# Beside it, what prepare_metadata_for_build_wheel built: the wheel's name and
# SHA-256.  build_wheel returns a wheel from there only when it is that one;
# any other file (one a frontend or another tool left in the metadata
# directory) was neither built nor verified by sagebuild.
_BUILT = "built.json"
# Far above any real option list; far below what the OS refuses (E2BIG).
_MAX_ARGS_CHARS = 64 * 1024


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
    try:
        rc = subprocess.call([_executable()] + args)
    except (OSError, ValueError) as e:  # E2BIG, a NUL byte: said in one line
        raise SystemExit("sagebuild: error: cannot run sagebuild %s: %s" % (args[0], e))
    if rc != 0:
        raise SystemExit("sagebuild: %s failed (exit %d); its message is above" % (args[0], rc))


def _bad_setting(what):
    raise SystemExit("sagebuild: error: config setting sagebuild-args: %s; expected sagebuild build options, "
                     "e.g. -C sagebuild-args=\"--jobs 4\"" % what)


def _extra_args(config_settings):
    """The options config_settings adds, checked: every problem is one line."""
    if config_settings is None:
        return []
    if not isinstance(config_settings, dict):
        _bad_setting("config_settings is a %s, not a mapping" % type(config_settings).__name__)
    value = config_settings.get("sagebuild-args", "")
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            _bad_setting("a list holding something other than text")
        value = " ".join(value)
    if not isinstance(value, str):
        _bad_setting("a %s, not text" % type(value).__name__)
    if len(value) > _MAX_ARGS_CHARS:
        _bad_setting("%d characters, more than the %d an option list may have" % (len(value), _MAX_ARGS_CHARS))
    if "\0" in value:
        _bad_setting("it holds a NUL character, which no command-line argument can")
    try:
        return shlex.split(value)
    except ValueError as e:  # an unbalanced quote
        _bad_setting("%s in %r" % (e, value[:200]))


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def _prepared_wheel(metadata_directory):
    """The wheel prepare_metadata_for_build_wheel built, or None: only a file
    whose name and SHA-256 are those it recorded."""
    prepared = os.path.join(metadata_directory, _PREPARED)
    try:
        with open(os.path.join(prepared, _BUILT), encoding="utf-8") as f:
            built = json.load(f)
        name, digest = built["wheel"], built["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(name, str) or os.path.basename(name) != name or not name.endswith(".whl"):
        return None
    path = os.path.join(prepared, name)
    if not os.path.isfile(path) or os.path.islink(path) or _sha256(path) != digest:
        return None
    return path


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    extra = _extra_args(config_settings)  # checked before anything runs
    if metadata_directory:
        prepared = _prepared_wheel(metadata_directory)
        if prepared:
            name = os.path.basename(prepared)
            shutil.copyfile(prepared, os.path.join(wheel_directory, name))
            return name
    with tempfile.TemporaryDirectory(prefix="sagebuild-") as tmp:
        result = os.path.join(tmp, "result.json")
        _run(["build", "--for-python", sys.executable, "--out", wheel_directory, "--no-smoke-test",
              "--json", result] + extra)
        with open(result, encoding="utf-8") as f:
            rows = json.load(f)["rows"]
    return os.path.basename(rows[0]["wheel"])


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    prepared = os.path.join(metadata_directory, _PREPARED)
    os.makedirs(prepared, exist_ok=True)
    name = build_wheel(prepared, config_settings)
    with open(os.path.join(prepared, _BUILT), "w", encoding="utf-8") as f:
        json.dump({"wheel": name, "sha256": _sha256(os.path.join(prepared, name))}, f)
    with zipfile.ZipFile(os.path.join(prepared, name)) as whl:
        dist_info = {m.split("/", 1)[0] for m in whl.namelist() if m.split("/", 1)[0].endswith(".dist-info")}
        (top,) = dist_info
        for member in whl.namelist():
            if member.startswith(top + "/"):
                whl.extract(member, metadata_directory)
    return top


def build_sdist(sdist_directory, config_settings=None):
    try:
        out = subprocess.run([_executable(), "sdist", "--out", sdist_directory], stdout=subprocess.PIPE,
                             universal_newlines=True)
    except (OSError, ValueError) as e:
        raise SystemExit("sagebuild: error: cannot run sagebuild sdist: %s" % e)
    sys.stdout.write(out.stdout)
    if out.returncode != 0:
        raise SystemExit("sagebuild: sdist failed (exit %d); its message is above" % out.returncode)
    return os.path.basename(out.stdout.strip().splitlines()[-1])
