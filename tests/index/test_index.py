"""`sagebuild index` against real pip.

Builds small wheels with zipfile (METADATA, WHEEL, RECORD, build_info.json),
runs `sagebuild index`, and installs from the generated site with the real pip
into fresh venvs: from one variant's index over file://, from a local
directory with --find-links, and over loopback HTTP.  Nothing leaves the
machine.  Set SAGEBUILD to the binary (default: build/tools/sagebuild/cli/sagebuild).
"""
import base64
import contextlib
import hashlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAGEBUILD = pathlib.Path(os.environ.get("SAGEBUILD", ROOT / "build/tools/sagebuild/cli/sagebuild"))

pytestmark = pytest.mark.skipif(
    not SAGEBUILD.exists(),
    reason=f"sagebuild binary not found at {SAGEBUILD}; build it (scripts/build-sagebuild.sh) "
    "or set SAGEBUILD",
)


def build_info(torch, cuda):
    """A build_info.json that sagebuild's parser accepts (schema 1)."""
    return {
        "schema": 1, "package": "sageattention", "version": "2.2.0", "abi_mode": "abi3",
        "pythons": ["3.9"],
        "wheel": {"build_tag": None, "local_version": None, "python_tag": "py3",
                  "abi_tag": "none", "platform_tag": "any"},
        "torch": {"version": torch, "cxx11_abi": True, "cuda": cuda},
        "cuda": {"version": cuda, "nvcc": cuda + ".0"},
        "archs": ["8.0"], "ptx_archs": ["8.0"], "kernel_families": {},
        "host_compiler": {"id": "gcc", "version": "13.2.0"}, "platform": "any",
        "source_revision": "0" * 40,
    }


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(directory, version, build_tag, torch, cuda, requires_python=">=3.8"):
    """A pure wheel (py3-none-any, so this machine's pip accepts its tags)."""
    dist_info = f"sageattention-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: sageattention\nVersion: {version}\n"
                f"Requires-Python: {requires_python}\nRequires-Dist: torch=={torch}\n")
    wheel = ("Wheel-Version: 1.0\nGenerator: test_index\nRoot-Is-Purelib: true\n"
             f"Tag: py3-none-any\nBuild: {build_tag}\n")
    members = {
        "sageattention/__init__.py": b"",
        "sageattention/build_info.json": json.dumps(build_info(torch, cuda)).encode(),
        f"{dist_info}/METADATA": metadata.encode(),
        f"{dist_info}/WHEEL": wheel.encode(),
    }
    record = [record_line(n, d) for n, d in members.items()] + [f"{dist_info}/RECORD,,"]
    members[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = directory / f"sageattention-{version}-{build_tag}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("index")
    dist = base / "dist"
    dist.mkdir()
    write_wheel(dist, "2.1.0", "280.129", "2.8.0", "12.9")
    write_wheel(dist, "2.2.0", "280.129", "2.8.0", "12.9")
    # Newer, but for a Python that does not exist: pip must skip it because of
    # data-requires-python (escaped as &gt; in the HTML).
    write_wheel(dist, "2.3.0", "280.129", "2.8.0", "12.9", requires_python=">=99")
    write_wheel(dist, "2.2.0", "290.130", "2.9.0", "13.0")
    out = base / "site"
    result = subprocess.run([str(SAGEBUILD), "index", str(dist), "--out", str(out),
                             "--base-url", "https://example.invalid/sage"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def clean_env():
    """The environment minus anything that would point pip elsewhere."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {
        "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1", "PIP_NO_INPUT": "1"}


def fresh_venv(path):
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def pip_install(python, *args):
    return subprocess.run([str(python), "-m", "pip", "install", "--no-deps", *args, "sageattention"],
                          capture_output=True, text=True, env=clean_env())


def installed(python):
    """(version, build_info torch version) of the installed sageattention."""
    code = ("import importlib.metadata as m, json, pathlib, sageattention as s;"
            "info = json.loads((pathlib.Path(s.__file__).parent / 'build_info.json').read_text());"
            "print(m.version('sageattention'), info['torch']['version'])")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True,
                         cwd=python.parent)
    return tuple(out.stdout.split())


def test_site_layout(site):
    assert (site / "index.html").exists()
    assert sorted(p.name for p in (site / "wheels").iterdir()) == [
        "sageattention-2.1.0-280.129-py3-none-any.whl",
        "sageattention-2.2.0-280.129-py3-none-any.whl",
        "sageattention-2.2.0-290.130-py3-none-any.whl",
        "sageattention-2.3.0-280.129-py3-none-any.whl",
    ]
    page = (site / "torch2.8-cu129/simple/sageattention/index.html").read_text()
    assert 'data-requires-python="&gt;=99"' in page
    detail = json.loads((site / "torch2.9-cu130/simple/sageattention/index.json").read_text())
    assert detail["meta"]["api-version"] == "1.1"
    (only,) = detail["files"]
    wheel = site / "wheels" / only["filename"]
    assert only["hashes"]["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert only["size"] == wheel.stat().st_size
    manifest = json.loads((site / "manifest.json").read_text())
    assert [v["name"] for v in manifest["variants"]] == ["torch2.8-cu129", "torch2.9-cu130"]
    landing = (site / "index.html").read_text()
    assert ("pip install sageattention --extra-index-url "
            "https://example.invalid/sage/torch2.9-cu130/simple/") in landing


@pytest.mark.slow
@pytest.mark.parametrize("variant,torch", [("torch2.8-cu129", "2.8.0"), ("torch2.9-cu130", "2.9.0")])
def test_pip_picks_the_variant_from_its_file_index(site, tmp_path, variant, torch):
    python = fresh_venv(tmp_path / "venv")
    url = (site / variant / "simple").as_uri() + "/"
    result = pip_install(python, "--index-url", url)
    assert result.returncode == 0, result.stdout + result.stderr
    # 2.3.0 is newer but requires Python >= 99: pip read data-requires-python.
    assert installed(python) == ("2.2.0", torch)


@pytest.mark.slow
def test_find_links_directory_orders_by_build_tag_not_by_torch(site, tmp_path):
    # All variants in one directory: pip breaks the 2.2.0 tie by build tag
    # alone (290.130 > 280.129), whatever torch is installed.  This is why
    # users choose a variant index instead (docs/releasing.md).
    python = fresh_venv(tmp_path / "venv")
    result = pip_install(python, "--no-index", "--find-links", str(site / "wheels"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed(python) == ("2.2.0", "2.9.0")


@contextlib.contextmanager
def http_server(directory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                               "--directory", str(directory)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail(f"http.server on {url} did not start")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.slow
def test_pip_installs_over_loopback_http(site, tmp_path):
    python = fresh_venv(tmp_path / "venv")
    with http_server(site) as url:
        result = pip_install(python, "--index-url", url + "torch2.8-cu129/simple/")
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed(python) == ("2.2.0", "2.8.0")


@pytest.mark.slow
def test_pip_refuses_a_wheel_that_does_not_match_the_index_hash(site, tmp_path):
    tampered = tmp_path / "site"
    shutil.copytree(site, tampered)
    good = tampered / "wheels/sageattention-2.2.0-280.129-py3-none-any.whl"
    shutil.copy(tampered / "wheels/sageattention-2.1.0-280.129-py3-none-any.whl", good)
    python = fresh_venv(tmp_path / "venv")
    result = pip_install(python, "--index-url", (tampered / "torch2.8-cu129/simple").as_uri() + "/")
    assert result.returncode != 0
    assert "hash" in (result.stdout + result.stderr).lower()


def test_index_explains_a_wheel_it_cannot_place(tmp_path):
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "sageattention-2.2.0-py3-none-any.whl").write_bytes(
        write_wheel(dist, "2.2.0", "280.129", "2.8.0", "12.9").read_bytes())
    # Remove build_info.json from the copy without a build tag.
    path = dist / "sageattention-2.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist() if not n.endswith("build_info.json")}
    with zipfile.ZipFile(path, "w") as z:
        for n, d in members.items():
            z.writestr(n, d)
    result = subprocess.run([str(SAGEBUILD), "index", str(dist), "--out", str(tmp_path / "site")],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "cannot tell which torch and CUDA" in result.stderr
    assert not (tmp_path / "site").exists()


def landing_snippet(site):
    """The landing page's `python -c ...` line, as a user would copy it."""
    import html
    import re
    page = (site / "index.html").read_text()
    (code,) = [html.unescape(c) for c in re.findall(r"<pre><code>(python -c .*?)</code></pre>", page)]
    assert code.startswith('python -c "') and code.endswith('"')
    return code[len('python -c "'):-1]


def run_snippet(site, pythonpath=None, python=sys.executable):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    out = subprocess.run([python, "-c", landing_snippet(site)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def fake_torch(tmp_path, version, cuda):
    """A stand-in torch package holding only the two attributes the snippet reads."""
    pkg = tmp_path / f"torch-{version}" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"__version__ = {version!r}\nclass version:\n    cuda = {cuda!r}\n")
    return pkg.parent


@pytest.mark.parametrize("version,cuda,printed", [
    ("2.9.0+cu130", "13.0", "https://example.invalid/sage/torch2.9-cu130/simple/"),
    ("2.8.1+cu129", "12.9", "https://example.invalid/sage/torch2.8-cu129/simple/"),
    ("2.12.0", "12.10", "https://example.invalid/sage/torch2.12-cu1210/simple/"),  # CUDA code MMmm
    ("2.11.0+cpu", None, "torch 2.11.0+cpu is a CPU build: install a CUDA build of torch first"),
])
def test_landing_snippet_prints_the_index_of_the_users_torch(site, tmp_path, version, cuda, printed):
    assert run_snippet(site, fake_torch(tmp_path, version, cuda)) == printed
    if cuda:  # an index this site has, where one was built
        variant = printed.rsplit("/", 3)[1]
        assert (site / variant / "simple").is_dir() == (variant in ("torch2.8-cu129", "torch2.9-cu130"))


def test_landing_snippet_with_the_real_torch(site):
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("no torch importable in this Python (scripts/install-deps.sh installs one)")
    version, cuda = probe.stdout.split()
    major, minor = version.split("+")[0].split(".")[:2]
    expected = (f"https://example.invalid/sage/torch{major}.{minor}-cu{cuda.replace('.', '')}/simple/"
                if cuda != "None" else f"torch {version} is a CPU build: install a CUDA build of torch first")
    assert run_snippet(site) == expected


@pytest.mark.slow
def test_the_next_release_keeps_every_earlier_version(site, tmp_path):
    """Release 1's site linked its wheels where they were served; release 2's
    index, built from release 2's wheels and release 1's manifest.json, still
    offers release 1's wheels (pip installs them from their old location)."""
    first = tmp_path / "first"
    served = (site / "wheels").as_uri() + "/"  # where release 1's assets "live"
    result = subprocess.run([str(SAGEBUILD), "index", str(site / "wheels"), "--out", str(first),
                             "--base-url", "https://example.invalid/sage", "--wheels-url", served],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    dist2 = tmp_path / "dist2"
    dist2.mkdir()
    write_wheel(dist2, "2.4.0", "21100.130", "2.11.0", "13.0")
    second = tmp_path / "second"
    result = subprocess.run([str(SAGEBUILD), "index", str(dist2), "--out", str(second), "--previous",
                             str(first / "manifest.json"), "--base-url", "https://example.invalid/sage",
                             "--wheels-url", (dist2.as_uri() + "/")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "(1 new, 4 from the previous index)" in result.stdout
    manifest = json.loads((second / "manifest.json").read_text())
    assert [v["name"] for v in manifest["variants"]] == ["torch2.8-cu129", "torch2.9-cu130", "torch2.11-cu130"]
    python = fresh_venv(tmp_path / "venv")
    old = pip_install(python, "--index-url", (second / "torch2.8-cu129" / "simple").as_uri() + "/")
    assert old.returncode == 0, old.stdout + old.stderr
    assert installed(python) == ("2.2.0", "2.8.0")
    new = pip_install(python, "--upgrade", "--index-url", (second / "torch2.11-cu130" / "simple").as_uri() + "/")
    assert new.returncode == 0, new.stdout + new.stderr
    assert installed(python) == ("2.4.0", "2.11.0")
