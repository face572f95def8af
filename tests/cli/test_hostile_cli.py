"""Hostile input through the real command line: one case or more per class of
../shared/fuzz-findings/README.md "Found 2026-11-28", run through the real
CLI and the real PEP 517 backend.  Every case must end in a clear one-line
error (exit 2) or the right verdict (verify: exit 1), in under 2 s and
256 MiB (measured per child with wait4), with no traceback, no internal
error, and nothing written outside the named output.

The two reproducers of that README are read from $SAGEBUILD_SHARED_DIR (or
../shared beside the checkout) and skipped when absent; every other case is
made here."""
import base64
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAGEBUILD = pathlib.Path(os.environ.get("SAGEBUILD", ROOT / "build/tools/sagebuild/cli/sagebuild"))
SHARED = pathlib.Path(os.environ.get("SAGEBUILD_SHARED_DIR", ROOT.parent / "shared"))
FINDINGS = SHARED / "fuzz-findings"
BACKEND = ROOT / "tools/sagebuild/pep517/backend"
pytestmark = pytest.mark.skipif(not SAGEBUILD.exists(),
                                reason=f"sagebuild binary not found at {SAGEBUILD}; build it or set SAGEBUILD")

MAX_SECONDS = 2.0
MAX_RSS_KIB = 256 * 1024


class Run:
    def __init__(self, rc, out, err, seconds, rss_kib):
        self.returncode, self.stdout, self.stderr, self.seconds, self.rss_kib = rc, out, err, seconds, rss_kib


# Linux keeps a process's peak RSS across exec (the kernel's signal->maxrss),
# so a child forked from this pytest (hundreds of MiB once torch is imported)
# would report pytest's size.  The command runs as the grandchild of a small
# fresh Python instead: forked from that helper's own small image, its wait4
# peak is the command's (within the helper's ~10 MiB), as /usr/bin/time would
# report it.  The helper writes the peak to RSS_FILE and exits as the command.
MEASURE = r"""
import os, sys
rss_file, argv = sys.argv[1], [os.fsencode(a) for a in sys.argv[2:]]
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(rss_file, "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def bounded(argv, cwd=ROOT, env=None):
    """Runs argv (bytes items): exit code, output, wall time and its own peak
    RSS in KiB (wait4 on the command alone, as /usr/bin/time -v reports it)."""
    rss_file = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"sb-rss-{os.getpid()}-{time.monotonic_ns()}"
    argv = [os.fsencode(sys.executable), b"-c", MEASURE.encode(), os.fsencode(rss_file)] + list(argv)
    start = time.monotonic()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, cwd=cwd or None,
                          env={**os.environ, **(env or {})})
    seconds = time.monotonic() - start
    try:
        rss_kib = int(rss_file.read_text())
        rss_file.unlink()
    except (OSError, ValueError):
        rss_kib = None  # the helper did not get to write it: the exit code says why
    return Run(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"),
               seconds, rss_kib)


def sb(*args, cwd=ROOT, env=None):
    return bounded([os.fsencode(SAGEBUILD)] + [a if isinstance(a, bytes) else os.fsencode(str(a)) for a in args],
                   cwd=cwd, env=env)


def assert_clear_error(r, *says, code=2):
    """Exit `code`, a one-line `sagebuild: error:` naming what it says, in bounds."""
    assert r.returncode == code, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "\x1b" not in r.stderr and "\u009b" not in r.stderr and "\u202e" not in r.stderr, r.stderr
    for s in says:
        assert s in r.stderr, (s, r.stderr)
    assert r.seconds < MAX_SECONDS, r.seconds
    assert r.rss_kib is not None and r.rss_kib < MAX_RSS_KIB, r.rss_kib


def one_line(text):
    return len(text.strip().splitlines()) == 1


# --- raw terminal controls ----------------------------------------------------------------------------------------

def test_terminal_controls_in_cli_parse_errors_are_escaped():
    for bad in ("--x\x1b[2J", "--y\u009b31m", "--z\u202eevil"):
        r = sb("matrix", bad)
        assert_clear_error(r, "sagebuild: error:")
        assert "\\x1b" in r.stderr or "\\u009b" in r.stderr or "\\u202e" in r.stderr, r.stderr


# --- operator files: one way to read them -------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--previous", "--matrix"])
def test_a_fifo_or_a_device_as_an_operator_file_is_refused_before_reading(tmp_path, option):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for target, says in ((fifo, "a FIFO (named pipe), not a regular file"),
                         ("/dev/zero", "a character device, not a regular file"),
                         (tmp_path, "a directory, not a regular file")):
        if option == "--previous":
            r = sb("index", wheels, "--out", tmp_path / "site", "--previous", target)
        else:
            r = sb("matrix", "--matrix", target)
        assert_clear_error(r, says)
        assert one_line(r.stderr), r.stderr
        assert not (tmp_path / "site").exists()


# --- output directories: one check --------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["package-self"], ["sdist"]])
def test_out_is_checked_before_any_work(tmp_path, command):
    afile = tmp_path / "afile"
    afile.write_text("x")
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    dangling = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere", dangling)
    cases = (("", "--out: expected a directory to write to, got an empty name"),
             (afile, "exists and is not a directory"),
             (afile / "sub", "is a file, not a directory"),
             (loop, "cannot be looked at"),
             (loop / "sub", "cannot be looked at"),
             (dangling, "is a symbolic link to nothing"))
    before = sorted(os.listdir(tmp_path))
    for out, says in cases:
        r = sb(*command, "--out", out)
        assert_clear_error(r, "--out", says)
        assert one_line(r.stderr), r.stderr
    assert sorted(os.listdir(tmp_path)) == before


def test_build_json_with_a_name_that_is_not_utf8_is_one_line(tmp_path):
    out = os.fsencode(tmp_path) + b"/dist-\xff"
    r = sb("build", "--dry-run", "--json", tmp_path / "r.json", "--out", out)
    assert_clear_error(r, "--out", "is not UTF-8")
    assert not (tmp_path / "r.json").exists()


def test_a_line_break_in_a_cache_or_build_path_is_refused_at_the_option(tmp_path):
    for option in ("--cache-dir", "--build-dir"):
        r = sb("build", "--dry-run", option, str(tmp_path / "a\nb"))
        assert_clear_error(r, option, "line break")
        assert one_line(r.stderr), r.stderr


# --- the matrix: bounded row expansion ----------------------------------------------------------------------------

def product_matrix(pythons=100, platforms=100, torches=10, variants=10):
    py = ", ".join('"3.%d"' % (10 + i) for i in range(pythons))
    y = "pythons: [%s]\nplatforms:\n" % py
    for i in range(platforms):
        y += '  p%d: {runner: r, pypi_torch_has_cuda: true, torch_index: "https://x/{cuda_tag}"}\n' % i
    y += "cuda:\n"
    for v in range(variants):
        y += '  "12.%d": {archs: ["8.0"]}\n' % v
    y += "torch:\n"
    for t in range(torches):
        y += '  "2.%d.0":\n    pythons: [%s]\n    variants:\n' % (t, py)
        y += "".join('      - {cuda: "12.%d"}\n' % v for v in range(variants))
    y += ("packages:\n  pkg:\n    version: 1.0.0\n    kernels: kernels/families.json\n    abi: per-interpreter\n"
          "    naming: local-version\n    archs: [\"8.0\"]\nprofiles:\n  default:\n    torch: [\"2.0.0\"]\n")
    return y


def test_a_matrix_expanding_to_a_million_rows_is_refused_early(tmp_path):
    m = tmp_path / "m.yaml"
    m.write_text(product_matrix())  # 100 x 100 x 10 x 10 = 10^6 rows
    for fmt in ("table", "json", "github"):
        r = sb("matrix", "--matrix", m, "--format", fmt)
        assert_clear_error(r, "more than 10000 rows before exclusions")


def test_reproducer_matrix_row_product_1e6():
    m = FINDINGS / "matrix-row-product-1e6" / "build-matrix.yaml"
    if not m.exists():
        pytest.skip(f"{m} not here (../shared/fuzz-findings; set SAGEBUILD_SHARED_DIR)")
    for fmt in ("table", "github"):
        r = sb("matrix", "--matrix", m, "--format", fmt)
        assert_clear_error(r, "more than 10000 rows before exclusions")


def test_unchecked_platform_tags_and_runners_never_reach_the_workflow(tmp_path):
    base = (ROOT / "matrix/build-matrix.yaml").read_text()
    for old, new, says in (("linux_x86_64:", "'linux_x86_64; curl x|sh':", "platform tag"),
                           ("runner: ubuntu-22.04", "runner: \"ubuntu-22.04 $(id)\"", "runner")):
        assert old in base
        m = tmp_path / "m.yaml"
        m.write_text(base.replace(old, new, 1))
        r = sb("matrix", "--matrix", m, "--format", "github")
        assert_clear_error(r, says, "is not made of the characters")


# --- verify: every ELF/PE a wheel carries -------------------------------------------------------------------------

def make_wheel(path, members, tag="manylinux_2_17_x86_64", requires=(), entry_points=None):
    """A wheel pip would install: WHEEL, METADATA, RECORD with digests."""
    name, version = "demo", "1.0"
    di = f"{name}-{version}.dist-info"
    files = dict(members)
    files[f"{di}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
                            f"Tag: py3-none-{tag}\n").encode()
    files[f"{di}/METADATA"] = ("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n" +
                               "".join(f"Requires-Dist: {r}\n" for r in requires)).encode()
    if entry_points:
        files[f"{di}/entry_points.txt"] = entry_points.encode()
    record = ""
    for n, data in files.items():
        digest = hashlib.sha256(data).digest()
        record += f"{n},sha256={base64.urlsafe_b64encode(digest).rstrip(b'=').decode()},{len(data)}\n"
    record += f"{di}/RECORD,,\n"
    files[f"{di}/RECORD"] = record.encode()
    path.mkdir(parents=True, exist_ok=True)
    whl = path / f"{name}-{version}-py3-none-{tag}.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data in files.items():
            info = zipfile.ZipInfo(n, (2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return whl


def host_elf():
    data = pathlib.Path("/bin/true").read_bytes()
    assert data[:4] == b"\x7fELF" and data[18:20] == b"\x3e\x00", "expected an x86-64 /bin/true"
    return data


def test_verify_reads_executables_in_data_scripts_with_no_library_beside(tmp_path):
    elf = host_elf()
    aarch64 = elf[:18] + (183).to_bytes(2, "little") + elf[20:]
    cases = {
        # a dynamically linked tool (glibc >= 2.5 symbols) tagged manylinux_2_5
        "dyn": (make_wheel(tmp_path / "d", {"demo-1.0.data/scripts/tool": elf}, "manylinux_2_5_x86_64"), "P2"),
        "arch": (make_wheel(tmp_path / "a", {"demo-1.0.data/scripts/tool": aarch64}), "P1"),
        "cut": (make_wheel(tmp_path / "c", {"demo-1.0.data/scripts/tool": elf[:len(elf) // 2]}), "P8"),
        "anywhere": (make_wheel(tmp_path / "w", {"demo/bin/helper.bin": aarch64}), "P1"),
        "any": (make_wheel(tmp_path / "y", {"demo-1.0.data/scripts/tool": elf}, "any"), "P1"),
    }
    for what, (whl, rule) in cases.items():
        r = sb("verify", whl)
        assert r.returncode == 1, (what, r.stdout, r.stderr)
        assert f" {rule} " in r.stdout, (what, r.stdout)
        assert r.seconds < MAX_SECONDS and r.rss_kib < MAX_RSS_KIB, (what, r.seconds, r.rss_kib)


def test_reproducer_verify_foreign_elf_in_data_scripts():
    d = FINDINGS / "verify-foreign-elf-in-data-scripts"
    wheels = sorted(d.glob("*.whl")) if d.exists() else []
    if not wheels:
        pytest.skip(f"{d} not here (../shared/fuzz-findings; set SAGEBUILD_SHARED_DIR)")
    r = sb("verify", wheels[0])
    assert r.returncode == 1, r.stdout
    assert "P1" in r.stdout and "aarch64" in r.stdout, r.stdout
    assert r.seconds < MAX_SECONDS and r.rss_kib < MAX_RSS_KIB


def test_verify_refuses_direct_url_dependencies_and_bidi_script_names(tmp_path):
    whl = make_wheel(tmp_path, {"demo/__init__.py": b""}, "any", requires=["torch @ https://example.org/torch.whl"])
    r = sb("verify", whl)
    assert r.returncode == 1 and " M6 " in r.stdout and "direct URL" in r.stdout, r.stdout
    (tmp_path / "b").mkdir()
    whl = make_wheel(tmp_path / "b", {"demo/__init__.py": b""}, "any",
                     entry_points="[console_scripts]\nls\u202etxt = demo:main\n")
    r = sb("verify", whl)
    assert r.returncode == 1 and " E2 " in r.stdout, r.stdout
    assert "\u202e" not in r.stdout


# --- index: what pip and PyPI would refuse ------------------------------------------------------------------------

def index_wheel(path, filename):
    name = filename.split("-")[0]
    ver = filename.split("-")[1]
    sub = path / filename.replace(".whl", "")
    sub.mkdir(parents=True)
    di = f"{name}-{ver.split('+')[0]}.dist-info"
    with zipfile.ZipFile(sub / filename, "w") as z:
        z.writestr(f"{di}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n")
        z.writestr(f"{di}/WHEEL", "Wheel-Version: 1.0\n")
        z.writestr(f"{di}/RECORD", "")


def test_index_refuses_files_one_to_pip_and_a_deep_tree(tmp_path):
    tail = "+cu128torch2.9.0-py3-none-any.whl"
    pairs = (("demo-1.0" + tail, "Demo-1.0" + tail),  # case
             ("demo-1.0" + tail, "demo-1.0.0" + tail),  # version form
             ("de_mo-1.0" + tail, "de.mo-1.0" + tail))  # name normalization
    for i, (a, b) in enumerate(pairs):
        d = tmp_path / f"w{i}"
        index_wheel(d, a)
        index_wheel(d, b)
        r = sb("index", d, "--out", tmp_path / f"site{i}")
        assert_clear_error(r, "one file to pip and PyPI")
        assert not (tmp_path / f"site{i}").exists()
    deep = tmp_path / "deep"
    p = deep
    for _ in range(40):
        p = p / "d"
    p.mkdir(parents=True)
    index_wheel(deep, "demo-1.0+cu128torch2.9.0-py3-none-any.whl")
    r = sb("index", deep, "--out", tmp_path / "site-deep")
    assert_clear_error(r, "nested more than 32 deep")


def test_previous_listing_one_file_twice_is_refused(tmp_path):
    d = tmp_path / "w"
    index_wheel(d, "demo-2.0+cu128torch2.9.0-py3-none-any.whl")
    r = sb("index", d, "--out", tmp_path / "site", "--wheels-url", "https://example.org/w/")
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "site/manifest.json").read_text())
    w = manifest["wheels"][0]
    manifest["wheels"] = [w, {**w, "url": "https://evil.example/" + w["filename"]}]
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps(manifest))
    r = sb("index", d, "--out", tmp_path / "site2", "--previous", prev)
    assert_clear_error(r, "again", "published once")


# --- the sdist and the links rule ---------------------------------------------------------------------------------

def copy_tree(dst):
    dst.mkdir(parents=True)
    for f in ("pyproject.toml", "LICENSE", "README.md"):
        shutil.copy(ROOT / f, dst / f)
    for d in ("kernels", "matrix", "python", "tools/sagebuild/pep517/backend"):
        shutil.copytree(ROOT / d, dst / d, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    return dst


def test_sdist_links_huge_files_and_pep625_name(tmp_path):
    tree = copy_tree(tmp_path / "tree")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    pkg = tree / "python/sageattention"
    # A link inside the tree ships as the file it points to.
    os.symlink("../../LICENSE", pkg / "LICENSE.link")
    os.mkfifo(tree / "kernels/a-fifo")  # not a file: skipped, never opened
    r = sb("sdist", "--source-dir", tree, "--out", tmp_path / "dist")
    assert r.returncode == 0, r.stderr
    sdist = pathlib.Path(r.stdout.strip().splitlines()[-1])
    assert sdist.name == "sageattention-2.2.0.tar.gz"  # PEP 625: normalized name and version
    with tarfile.open(sdist) as t:
        m = t.getmember("sageattention-2.2.0/python/sageattention/LICENSE.link")
        assert m.isfile() and t.extractfile(m).read() == (ROOT / "LICENSE").read_bytes()
        assert not any(x.issym() or x.islnk() for x in t.getmembers())
        assert not any(x.name.endswith("a-fifo") for x in t.getmembers())
    # A link leaving the tree is refused, naming it.
    os.symlink(outside, pkg / "evil.py")
    r = sb("sdist", "--source-dir", tree, "--out", tmp_path / "dist2")
    assert_clear_error(r, "evil.py", "leaves the tree")
    assert not (tmp_path / "dist2").exists()
    os.unlink(pkg / "evil.py")
    # Two 2 GiB sparse files: refused by their size, before reading.
    for n in ("big1.bin", "big2.bin"):
        with open(tree / "kernels" / n, "wb") as f:
            f.truncate(2 << 30)
    r = sb("sdist", "--source-dir", tree, "--out", tmp_path / "dist3")
    assert_clear_error(r, "big1.bin", "larger than 16777216 bytes")


# --- the PEP 517 backend ------------------------------------------------------------------------------------------

def backend(code, tmp_path, env=None):
    return subprocess.run([sys.executable, "-c", "import sagebuild\n" + code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(BACKEND), "SAGEBUILD": str(SAGEBUILD), **(env or {})})


@pytest.mark.parametrize("setting, says", [
    ('"--jobs 4', "No closing quotation"),
    ("--jobs\x004", "NUL"),
    ("x" * 70000, "more than the 65536"),
    (42, "a int, not text"),
    ([1, 2], "a list holding something other than text"),
])
def test_backend_config_settings_end_in_one_line(tmp_path, setting, says):
    r = backend(f"sagebuild.build_wheel({str(tmp_path)!r}, {{'sagebuild-args': {setting!r}}})", tmp_path)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("sagebuild: error: config setting sagebuild-args:") and says in r.stderr, r.stderr
    assert one_line(r.stderr), r.stderr


def test_backend_never_returns_a_wheel_it_did_not_build(tmp_path):
    meta = tmp_path / "meta"
    (meta / ".sagebuild-wheel").mkdir(parents=True)
    planted = meta / ".sagebuild-wheel" / "sageattention-9.9.9-py3-none-any.whl"
    planted.write_bytes(b"PK\x05\x06" + bytes(18))
    out = tmp_path / "out"
    out.mkdir()
    # The real build runs (and fails at once on a bad option) instead of the
    # planted file being handed back.
    r = backend(f"print(sagebuild.build_wheel({str(out)!r}, {{'sagebuild-args': '--jobs 0'}}, {str(meta)!r}))",
                tmp_path)
    assert r.returncode != 0 and "build failed" in r.stderr, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert list(out.iterdir()) == []
    # A recorded name whose bytes changed is not reused either.
    (meta / ".sagebuild-wheel" / "built.json").write_text(
        json.dumps({"wheel": planted.name, "sha256": "0" * 64}))
    r = backend(f"print(sagebuild.build_wheel({str(out)!r}, {{'sagebuild-args': '--jobs 0'}}, {str(meta)!r}))",
                tmp_path)
    assert r.returncode != 0 and list(out.iterdir()) == [], r.stdout


def test_a_static_executable_in_data_scripts_passes_the_stricter_verify(tmp_path):
    """The tool wheel's shape (scripts/build-sagebuild-static.sh: a static
    executable in sagebuild-<v>.data/scripts/, tagged with the oldest
    manylinux level): the stricter verify reads it and passes it, and fails
    the same bytes under a foreign architecture's tag."""
    src = tmp_path / "hello.c"
    src.write_text("int main(void) { return 0; }\n")
    exe = tmp_path / "hello"
    cc = subprocess.run(["cc", "-static", "-O1", "-o", str(exe), str(src)], capture_output=True, text=True)
    if cc.returncode != 0:
        pytest.skip("no static C toolchain here (libc6-dev's libc.a): " + cc.stderr[-300:])
    data = exe.read_bytes()
    (tmp_path / "ok").mkdir()
    whl = make_wheel(tmp_path / "ok", {"demo-1.0.data/scripts/hello": data}, "manylinux_2_5_x86_64")
    r = sb("verify", whl)
    assert r.returncode == 0, r.stdout
    (tmp_path / "arm").mkdir()
    whl = make_wheel(tmp_path / "arm", {"demo-1.0.data/scripts/hello": data}, "manylinux_2_17_aarch64")
    r = sb("verify", whl)
    assert r.returncode == 1 and " P1 " in r.stdout, r.stdout
