"""The release workflow's steps that decide whether a first run on GitHub
goes green, each checked here by running or evaluating the step itself:
the line ends of what bash reads on Windows, the torch a Windows build
Python gets, the host compiler a CUDA 12.4/12.6 row needs, the preflight
before every build, git in container jobs, which runs release, the manual
run's choices and the step that refuses one, the build image's pin,
re-runs of the attach step, and the tool wheels' cache.

The jobs are rendered by test_workflows.py's evaluator (GitHub's expression
syntax); a build leg's matrix row is one of `sagebuild matrix`'s rows where
sagebuild is built, and otherwise a row of the same shape for each kind
(Linux/Windows, CUDA installed or from PyPI, built from upstream's tree)."""
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess

import pytest

from test_workflows import (ROOT, SAGEBUILD, SCRIPTS, SERVICES, WORKFLOW, Step, condition_holds, evaluate, render,
                            workflow)

ALL_PASSED = {"success": True, "failure": False, "always": True, "cancelled": False}


def context(event="push", ref="refs/tags/v2.2.0", dispatch="", **extra):
    github = {"event_name": event, "ref": ref, "ref_name": ref.rsplit("/", 1)[-1], "repository": "o/sage",
              "repository_owner": "o", "event": {"repository": {"name": "sage"}}, "workspace": str(ROOT)}
    needs = {n: {"result": "success", "outputs": {"rows": "2", "matrix": "{}"}}
             for n in ("plan", "build", "release-open", "test", "release")}
    return {"github": github, "inputs": {"profile": dispatch} if dispatch else {}, "needs": needs,
            "status": ALL_PASSED, "secrets": {"GITHUB_TOKEN": "***"}, "steps": {}, **extra}


def job_runs(name, ctx):
    return condition_holds(workflow()["jobs"][name].get("if"), ctx)


def leg(job, row, ctx=None, steps_outputs=None):
    """The steps of one matrix leg that run, rendered."""
    ctx = dict(ctx or context(), matrix=row, steps=steps_outputs or {},
               runner={"os": "Windows" if row["os"].startswith("windows") else "Linux"})
    return [Step(raw, ctx) for raw in workflow()["jobs"][job]["steps"] if condition_holds(raw.get("if"), ctx)]


def synthetic_rows():
    base = {"package": "sageattention", "python": "3.10", "torch": "2.11.0", "upstream_commit": None,
            "upstream_repository": None}
    rows = []
    for os_, cuda, provision, index, upstream in (
            ("ubuntu-22.04", "13.0", "pypi", "https://download.pytorch.org/whl/cu130", False),
            ("ubuntu-22.04", "12.4", "install", None, False),
            ("windows-2022", "12.8", "install", "https://download.pytorch.org/whl/cu128", False),
            ("windows-2022", "13.0", "pypi", "https://download.pytorch.org/whl/cu130", True),
            ("ubuntu-22.04", "12.8", "install", None, True)):
        rid = f"row-{os_}-{cuda}-{'sage3' if upstream else 'sage2'}"
        rows.append(dict(base, id=rid, os=os_, cuda=cuda, cuda_provision=provision, torch_index=index,
                         command=f"sagebuild --row {rid} --out dist", artifact=f"wheel-{rid}",
                         **({"package": "sageattn3", "upstream_commit": "0" * 40,
                             "upstream_repository": "thu-ml/SageAttention"} if upstream else {})))
    return rows


def matrix_rows():
    """Every row a tag builds (sagebuild's plan), or the synthetic rows."""
    if not SAGEBUILD.exists():
        return synthetic_rows()
    rows = []
    for profile in ("release", "sage3"):
        out = subprocess.run([str(SAGEBUILD), "matrix", "--profile", profile, "--format", "github"],
                             capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        rows += json.loads(out.stdout)["include"]
    return rows


def named(steps, prefix):
    found = [st for st in steps if st.name.startswith(prefix)]
    assert len(found) <= 1, [st.name for st in steps]
    return found[0] if found else None


# --- Windows: the build Python's torch -----------------------------------------


def pip_installs(script):
    """Each `python -m pip install ...` of a step's script, as argument lists."""
    joined = script.replace("\\\n", " ")
    return [shlex.split(line)[3:] for line in joined.splitlines() if re.match(r"\s*python -m pip install\b", line)]


def test_the_build_and_its_smoke_test_get_torch_with_its_dependencies():
    """sagebuild's smoke test imports torch; torch's __init__ imports
    typing_extensions, absent from setup-python's Python.  Every row, Linux
    and Windows alike, has sagebuild provision the smoke test's torch with its
    dependencies (--provision-torch); the Windows build Python's own torch
    (headers, import libraries) is installed with its dependencies too."""
    for row in synthetic_rows():
        steps = leg("build", row)
        assert "--provision-torch" in shlex.split(named(steps, "Build the wheel").run), row["id"]
        torch_installs = [args for st in steps if st.run for args in pip_installs(st.run)
                          if any(a.startswith("torch") for a in args)]
        if row["os"].startswith("windows"):
            assert torch_installs, f"{row['id']}: nothing puts torch into the build Python"
        for args in torch_installs:
            assert "--no-deps" not in args, f"{row['id']}: torch without its dependencies: pip install {args}"


# --- Line ends of what bash reads -------------------------------------------------


def bash_reads():
    """Every tracked file bash runs: *.sh, .ci/run, and any with a sh/bash shebang."""
    files = subprocess.run(["git", "ls-files", "-z"], capture_output=True, cwd=ROOT, check=True).stdout
    found = []
    for name in filter(None, files.decode().split("\0")):
        path = ROOT / name
        if not path.is_file() or path.is_symlink():
            continue
        with open(path, "rb") as f:
            first = f.readline(200)
        if name.endswith(".sh") or name == ".ci/run" or re.match(rb"#!.*\b(ba)?sh\b", first):
            found.append(name)
    return found


def test_everything_bash_reads_is_checked_out_with_lf_line_ends(tmp_path):
    """Windows runners check text out with CRLF (core.autocrlf=true); bash
    then reads `set -euo pipefail\\r`.  .gitattributes pins eol=lf for every
    file bash reads, and install-cuda.sh, converted as a Windows checkout
    converts it, runs."""
    files = bash_reads()
    assert ".github/scripts/install-cuda.sh" in files and ".ci/run" in files, files
    out = subprocess.run(["git", "check-attr", "eol", "--", *files], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout
    not_lf = [line for line in out.splitlines() if not line.endswith(": eol: lf")]
    assert not not_lf, "checked out with the platform's line ends (add them to .gitattributes):\n" + "\n".join(not_lf)
    script = ".github/scripts/install-cuda.sh"
    blob = subprocess.run(["git", "rev-parse", f":{script}"], capture_output=True, text=True, cwd=ROOT,
                          check=True).stdout.strip()  # the index's copy: what a checkout writes
    windows = subprocess.run(["git", "-c", "core.autocrlf=true", "cat-file", "--filters", f"--path={script}", blob],
                             capture_output=True, cwd=ROOT, check=True).stdout
    checked_out = tmp_path / "install-cuda.sh"
    checked_out.write_bytes(windows)
    r = subprocess.run(["bash", str(checked_out), "12.8"], capture_output=True, text=True,
                       env={**os.environ, "DRY_RUN": "1", "RUNNER_OS": "Windows", "RUNNER_TEMP": str(tmp_path),
                            "GITHUB_ENV": str(tmp_path / "env")})
    assert r.returncode == 0, r.stdout + r.stderr


# --- Linux: a host compiler the row's CUDA accepts ---------------------------------


def sagebuilds_gcc_limits():
    """CUDA release -> newest GCC major, from sagebuild's own table."""
    text = (ROOT / "tools/sagebuild/toolchain/host_compiler.cc").read_text()
    return {cuda: int(top) for cuda, top in re.findall(r'\{\{"([0-9.]+)", "gcc"\}, \{\d+, (\d+),', text)}


def fake_gxx(tmp_path, major):
    """The image's g++ as `-dumpversion` reports it (the manylinux image's is 14)."""
    d = tmp_path / f"gcc{major}"
    d.mkdir(exist_ok=True)
    (d / "g++").write_text(f"#!/bin/sh\necho {major}.2.1\n")
    (d / "g++").chmod(0o755)
    return d / "g++"


def test_linux_rows_get_a_host_compiler_their_cuda_accepts(tmp_path):
    limits = sagebuilds_gcc_limits()
    assert limits["12.4"] == 13 and limits["13.0"] == 15, limits
    script = SCRIPTS / "install-host-compiler.sh"
    for row in matrix_rows():
        steps = leg("build", row)
        step = named(steps, "A host compiler")
        if row["os"].startswith("windows"):
            assert step is None, row["id"]  # MSVC: the runner's own, checked by sagebuild
            continue
        assert step is not None, f"{row['id']}: no step gives the row a compiler its CUDA accepts"
        assert steps.index(step) < steps.index(named(steps, "Build the wheel")), row["id"]
        assert step.env["CUDA_VERSION"] == row["cuda"] and "install-host-compiler.sh" in step.run, row["id"]
    # The script's choice for each CUDA release the matrix knows, with the
    # image's GCC 14: gcc-toolset-N, N sagebuild's limit, only where 14 is refused.
    for cuda, top in sorted(limits.items()):
        if cuda.startswith("11."):
            continue  # no row builds CUDA 11
        r = subprocess.run(["bash", str(script), cuda], capture_output=True, text=True,
                           env={**os.environ, "DRY_RUN": "1", "GXX": str(fake_gxx(tmp_path, 14))})
        assert r.returncode == 0, r.stdout + r.stderr
        if top < 14:
            assert f"+ dnf install -y -q gcc-toolset-{top}-gcc-c++" in r.stdout, (cuda, r.stdout)
        else:
            assert "dnf" not in r.stdout and "nothing to install" in r.stdout, (cuda, r.stdout)
    r = subprocess.run(["bash", str(script), "12.1"], capture_output=True, text=True)
    assert r.returncode == 2 and "12.1" in r.stderr, r.stderr


# --- The preflight before every build ------------------------------------------


def test_every_build_row_runs_the_preflight_before_compiling():
    """`sagebuild doctor --row ID --preprocess`, with exactly the build's
    flags, after everything is installed and before the build."""
    for row in matrix_rows():
        steps = leg("build", row)
        build = named(steps, "Build the wheel")
        pre = named(steps, "Preflight")
        assert pre is not None, f"{row['id']}: no preflight"
        assert steps.index(pre) == steps.index(build) - 1, [st.name for st in steps]
        args = shlex.split(pre.run)
        assert args[0] == "sagebuild" and "doctor" in args and "--preprocess" in args, pre.run
        # The row and the flags of the build that find tools: only the row's
        # command, the smoke test's torch (which doctor provisions anyway) and
        # the kernel objects the build takes (doctor has no such option) differ.
        assert build.run.startswith(row["command"] + " --provision-torch"), build.run
        flags = build.run[len(row["command"] + " --provision-torch"):].removesuffix(" --kernel-objects kernel-objects")
        assert pre.run == f"sagebuild doctor --preprocess --row {row['id']}{flags}", (pre.run, build.run)
        assert pre.env == build.env, row["id"]


# --- git in the container jobs -----------------------------------------------------


def test_container_jobs_let_git_read_their_checkout(tmp_path):
    """actions/checkout marks the workspace safe only while it runs: in a
    container (root, the workspace owned by the runner's user) every later
    git call refuses it, and sagebuild records source_revision "unknown".
    Each container job's checkout is followed by a step that marks it safe;
    run here on a checkout root does not own, git then reads it."""
    safe_steps = []
    for name, job in workflow()["jobs"].items():
        if "container" not in job:
            continue
        raws = job["steps"]
        own = [i for i, raw in enumerate(raws) if raw.get("uses", "").startswith("actions/checkout")
               and "repository" not in raw.get("with", {})]
        assert own, name
        after = raws[own[0] + 1]
        assert "safe.directory" in after.get("run", ""), f"{name}: the step after the checkout is {after}"
        safe_steps.append(after["run"])
    assert len(safe_steps) >= 4, safe_steps  # tests, plan, build, release
    if os.geteuid() != 0:
        pytest.skip("the ownership check needs root to give the checkout to another user")
    repo = tmp_path / "workspace"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    subprocess.run(["chown", "-R", "65534:65534", str(repo)], check=True)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"), "GITHUB_WORKSPACE": str(repo)}
    env.pop("GIT_CONFIG_NOSYSTEM", None)
    (tmp_path / "gitconfig").write_text("")
    before = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, env=env)
    assert before.returncode != 0 and "dubious ownership" in before.stderr, before.stderr
    for run in set(safe_steps):
        subprocess.run(["bash", "-eo", "pipefail", "-c", run], check=True, env=env, cwd=repo)
    after = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, env=env)
    assert after.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}\n", after.stdout), after.stderr


# --- Only a pushed tag releases -----------------------------------------------------


def test_only_a_pushed_tag_opens_attaches_and_publishes_a_release():
    """A manual run started from a tag (github.ref refs/tags/v...) builds its
    profile and releases nothing; the tag's push releases."""
    for event, dispatch, releases in (("push", "", True), ("workflow_dispatch", "release", False)):
        ctx = context(event=event, ref="refs/tags/v2.2.0", dispatch=dispatch)
        assert job_runs("release-open", ctx) == releases, event
        row = synthetic_rows()[0]
        attach = [st for st in leg("test", row, ctx) if st.name == "Attach the wheel to the release"]
        assert bool(attach) == releases, event
        if not releases:  # release and pages follow release-open, which was skipped
            ctx["needs"]["release-open"] = {"result": "skipped", "outputs": {}}
            assert not job_runs("release", ctx)
        retention = [st for job in workflow()["jobs"].values() for st in job["steps"]
                     if st.get("uses", "").startswith("actions/upload-artifact")]
        for st in retention:
            days = evaluate(re.fullmatch(r"\$\{\{(.*)\}\}", st["with"]["retention-days"]).group(1), ctx)
            assert days == (90 if releases else 7), (event, days)


# --- The manual run's profile --------------------------------------------------------


def test_every_manual_run_choice_is_a_profile_profiles_sh_builds():
    options = workflow()[True]["workflow_dispatch"]["inputs"]["profile"]["options"]
    for option in options:
        r = subprocess.run(["bash", str(SCRIPTS / "profiles.sh"), "workflow_dispatch", "refs/heads/main", option],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"the choice {option!r} is refused: {r.stderr}"


def run_plan_step(step_name, ctx, tmp_path, path_extra=()):
    raw = next(s for s in workflow()["jobs"]["plan"]["steps"] if s.get("name") == step_name)
    step = Step(raw, ctx)
    out = tmp_path / "github_output"
    out.write_text("")
    env = {**os.environ, **step.env, "GITHUB_OUTPUT": str(out),
           "PATH": os.pathsep.join([*path_extra, os.environ["PATH"]])}
    r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step.run], capture_output=True,
                       text=True, cwd=ROOT, env=env)
    return r, out.read_text()


def test_a_refused_profile_fails_the_step_that_chooses_it(tmp_path):
    """The step fails with profiles.sh's message (GitHub runs it with bash
    -eo pipefail), rather than writing `profiles=` and failing later."""
    r, output = run_plan_step("Choose profiles", context("workflow_dispatch", "refs/heads/main", "upstream"),
                              tmp_path)
    assert r.returncode != 0 and "neither builds nor publishes" in r.stderr, (r.returncode, r.stderr)
    assert output == "", output
    r, output = run_plan_step("Choose profiles", context("pull_request", "refs/pull/1/merge"), tmp_path)
    assert r.returncode == 0 and output == "profiles=default default-windows\n", (r.stderr, output)


# --- The build image ------------------------------------------------------------------

IMAGE_REF = re.compile(r"quay\.io/pypa/manylinux[\w.-]*(?:[:@][\w.:-]*)?")


def test_the_manylinux_image_is_pinned_by_one_digest():
    """Every reference to the build image, in the workflow and in the scripts
    that run its jobs here, names it by digest; one digest per machine."""
    refs = []
    sources = [WORKFLOW, *sorted((ROOT / "scripts").glob("*")), *sorted(SCRIPTS.glob("*"))]
    for path in sources:
        if path.is_file():
            refs += [(path.name, m.group(0)) for m in IMAGE_REF.finditer(path.read_text(errors="replace"))]
    assert any(name == WORKFLOW.name for name, _ in refs), "the workflow names no manylinux image"
    digests = {}
    for name, ref in refs:
        m = re.fullmatch(r"quay\.io/pypa/manylinux_2_28_(x86_64|aarch64)@sha256:([0-9a-f]{64})", ref)
        assert m, f"{name}: {ref} is not pinned by digest"
        digests.setdefault(m.group(1), set()).add(m.group(2))
    assert set(digests) == {"x86_64", "aarch64"} and all(len(d) == 1 for d in digests.values()), digests
    # The container expression renders to the pinned image for Linux rows
    # only, the aarch64 one on GitHub's ARM runners.
    container = workflow()["jobs"]["build"]["container"]
    for os_, machine in (("ubuntu-22.04", "x86_64"), ("ubuntu-24.04-arm", "aarch64")):
        (digest,) = digests[machine]
        assert render(container, {"matrix": {"os": os_}}) == f"quay.io/pypa/manylinux_2_28_{machine}@sha256:{digest}"
    assert render(container, {"matrix": {"os": "windows-2022"}}) == ""


# --- Re-running a test job -----------------------------------------------------------


def test_a_rerun_of_a_test_job_attaches_its_wheel_again(tmp_path):
    """The attach step run twice against the release (gh's stand-in, which
    refuses an existing asset as gh does without --clobber): both pass."""
    github = tmp_path / "github"
    (github / "releases").mkdir(parents=True)
    env = {**os.environ, "FAKE_GITHUB": str(github), "GITHUB_REPOSITORY": "o/sage",
           "PATH": f"{SERVICES}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["gh", "release", "create", "v2.2.0", "--repo", "o/sage", "--draft"], check=True, env=env)
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "sageattention-2.2.0-cp310-abi3-linux_x86_64.whl").write_bytes(b"wheel")
    row = synthetic_rows()[0]
    (attach,) = [st for st in leg("test", row) if st.name == "Attach the wheel to the release"]
    for attempt in (1, 2):
        r = subprocess.run(["bash", "-eo", "pipefail", "-c", attach.run], capture_output=True, text=True,
                           cwd=tmp_path, env={**env, **attach.env})
        assert r.returncode == 0, f"attempt {attempt}: {r.stderr}"
    assert [a.name for a in (github / "releases/v2.2.0/assets").iterdir()] == [
        "sageattention-2.2.0-cp310-abi3-linux_x86_64.whl"]


# --- The tool wheels' cache --------------------------------------------------------------


def tool_sources():
    """Every tracked file the tool wheels are built from: sagebuild's tree,
    the CMake project, the licence it embeds, the scripts that build it."""
    tracked = subprocess.run(["git", "ls-files", "tools/sagebuild", "CMakeLists.txt", "LICENSE",
                              "scripts/build-sagebuild-static.sh", "scripts/install-deps.sh"],
                             capture_output=True, text=True, cwd=ROOT, check=True).stdout.split()
    return tracked


def copy_tree(files, dest):
    for f in files:
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f, dest / f)


def test_the_tool_wheels_are_cached_by_the_hash_of_their_sources(tmp_path):
    raws = workflow()["jobs"]["plan"]["steps"]
    names = [raw.get("name", raw.get("uses")) for raw in raws]
    (cache,) = [raw for raw in raws if raw.get("uses", "").startswith("actions/cache")]
    build = next(raw for raw in raws if raw.get("name", "").startswith("Build the tool wheels"))
    assert names.index(cache["name"]) < names.index(build["name"])
    assert cache["with"]["path"] == "dist-tool"
    # A hit skips the build (and wine's install); the later steps use the restored wheels.
    for hit, builds in (("true", True), ("false", False)):
        ctx = context(steps={cache["id"]: {"outputs": {"cache-hit": hit}}})
        assert condition_holds(build.get("if"), ctx) is not builds, hit
    # The key: the hash of every source file of the tool wheels. A change to
    # any of them gives another key; a change elsewhere does not.
    files = tool_sources()
    assert "tools/sagebuild/cli/main.cc" in files and "scripts/build-sagebuild-static.sh" in files
    ws = tmp_path / "ws"
    copy_tree(files + ["README.md", "docs/releasing.md"], ws)

    def key():
        ctx = context()
        ctx["github"]["workspace"] = str(ws)
        return render(cache["with"]["key"], ctx)
    first = key()
    assert re.fullmatch(r"sagebuild-tool-[0-9a-f]{64}", first), first
    for f in ("README.md", "docs/releasing.md"):
        (ws / f).write_text("changed")
        assert key() == first, f
    for f in (files[0], files[len(files) // 2], "CMakeLists.txt", "scripts/build-sagebuild-static.sh", "LICENSE"):
        before = key()
        (ws / f).write_bytes((ws / f).read_bytes() + b"\n")
        assert key() != before, f"{f} changed but the cache key did not"
