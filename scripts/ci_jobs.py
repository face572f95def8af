#!/usr/bin/env python3
"""The release workflow's Linux jobs, run step by step in the clean room.

    python3 scripts/ci_jobs.py {pull_request|push|tag} [options]   (or scripts/ci-jobs.sh)

Reads .github/workflows/wheels.yml itself (nothing here restates a step) and
runs, for the trigger, what GitHub would run on Linux:
  tests  (pull_request, push)  its steps, ending with `bash scripts/test.sh`;
  plan   its steps: install-deps, both tool wheels (Linux static, Windows
         mingw-w64 under wine), the tool wheel installed by pip, the version
         check, the profiles, the plan; its outputs feed the build legs;
  kernels each Linux group of the plan's `kernels` output, before the build
         legs: the kernels job's steps, the tool wheel installed by pip, the
         host compiler, `--kernels-only`, the upload of kernel-objects-<group>;
  build  each Linux x86_64 row of the plan (a tag's Linux aarch64 rows, and
         the tool-aarch64 job, run on GitHub's ARM runners: not here): the
         build job's steps in order, from the
         checkout through the tool wheel installed by pip, the kernel objects
         of its group (downloaded, as the tool wheel is), the host compiler,
         the preflight (`sagebuild doctor --preprocess`), then the build.

Each job runs in a fresh clean room (scripts/cleanroom.sh: a debootstrap'd
Debian 12 minbase root; one room per job, as one runner per job), in a fresh
clone of this repository's HEAD commit (actions/checkout's clean clone), with
../shared beside it when this checkout has one.  The steps' `if:`, `env:` and
`${{ }}` are evaluated as GitHub does (scripts/workflow_expr.py); each step
runs as `bash --noprofile --norc -eo pipefail` with GITHUB_OUTPUT, GITHUB_ENV,
GITHUB_PATH, GITHUB_STEP_SUMMARY and RUNNER_TEMP; an agent inside the room
(written into the clone, .ci-jobs/agent.sh) runs them one at a time while
this driver, outside, renders the next from the outputs of the last.
GitHub's actions are done here by the driver: checkout (the clone; upstream's
tree from ../shared/anchors/upstream-sageattention/src, the pinned commit),
upload-/download-artifact (a directory per run), cache (a directory kept
between runs, keyed as the workflow keys it).

Where the room is not the job's machine, it says so in the log, and does this:
  - the build job's container is manylinux_2_28 (AlmaLinux 8): its
    /opt/python/cpXY-cpXY is stood in for by a venv of Debian 12's Python
    3.11 at that path (Debian's python3-dev, git and g++ installed first):
    an abi3 row builds with any CPython >= 3.9; a row that needs its own
    Python (sageattn3: cp312) cannot run here and is reported so;
  - a row whose CUDA only NVIDIA's repositories ship (cuda_provision
    "install": CUDA 12) runs install-cuda.sh with DRY_RUN=1 (NVIDIA's
    repository is not reachable from the clean room's machine): it prints the
    commands and sets CUDA_HOME; the preflight then runs without that toolkit
    and must name exactly it as missing;
  - compiles are expensive on a small machine: by default the rows given by
    --compile are built for real (the build step exactly; --archs A appends
    `--archs A` to it, said in the log), every other row stops after its
    preflight.  A kernels leg compiles only when a row of its group is
    compiled (with that row's --archs); otherwise it stops before compiling,
    and its rows' download of kernel-objects-<group>, which it never
    uploaded, is reported as not done (they stop before the build anyway).
Exit status: 0 when every job and row passed as described, 1 otherwise.
"""
import argparse
import glob
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from workflow_expr import condition_holds, evaluate, render  # noqa: E402

WORKFLOW = ROOT / ".github/workflows/wheels.yml"
INSIDE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
UPSTREAM_COPY = ROOT.parent / "shared/anchors/upstream-sageattention/src"

def runs_here(leg):
    """A leg of GitHub's x86_64 Linux runners (not Windows, not ARM): the
    clean room is an x86_64 Debian root."""
    return leg["os"].startswith("ubuntu") and not leg["os"].endswith("-arm")


AGENT = r"""#!/bin/bash
# Written by scripts/ci_jobs.py: runs, inside the clean room, the steps the
# driver hands over, one at a time: DIR/N.sh with DIR/N.env; its output in
# DIR/N.log, its exit status in DIR/N.rc.  DIR/stop ends it.
d="$1"
n=1
while :; do
  while [ ! -e "$d/$n.go" ] && [ ! -e "$d/stop" ]; do sleep 0.2; done
  [ -e "$d/$n.go" ] || exit 0
  rc=0
  (
    set -a
    . "$d/$n.env"
    set +a
    mkdir -p "$RUNNER_TEMP"
    cd "$GITHUB_WORKSPACE" && exec bash --noprofile --norc -eo pipefail "$d/$n.sh"
  ) >"$d/$n.log" 2>&1 </dev/null || rc=$?
  echo "$rc" >"$d/$n.rc.tmp"
  mv "$d/$n.rc.tmp" "$d/$n.rc"
  n=$((n + 1))
done
"""


def say(msg):
    print(f"[ci-jobs {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def workflow(sha="HEAD"):
    """The workflow of the commit the jobs run (not the working tree's)."""
    text = subprocess.run(["git", "show", f"{sha}:.github/workflows/wheels.yml"], capture_output=True, text=True,
                          cwd=ROOT, check=True).stdout
    return yaml.safe_load(text)


def matrix_version():
    """The version a tag of this tree carries: check-version.sh's source."""
    data = yaml.safe_load((ROOT / "matrix/build-matrix.yaml").read_text())
    return data["packages"]["sageattention"]["version"]


def trigger(event):
    if event == "pull_request":
        return "pull_request", "refs/pull/1/merge"
    if event == "push":
        return "push", "refs/heads/main"
    if event == "tag":
        return "push", f"refs/tags/v{matrix_version()}"
    raise SystemExit(f"ci_jobs.py: unknown trigger '{event}'; expected pull_request, push or tag")


class Room:
    """One job's machine: a fresh clone in a fresh clean room, and the agent
    inside it that runs the steps."""

    def __init__(self, run_dir, label, sha, cleanroom):
        self.base = run_dir / re.sub(r"[^A-Za-z0-9._-]", "_", label)
        if self.base.exists():
            shutil.rmtree(self.base)
        self.ws = self.base / "checkout"
        self.ws.parent.mkdir(parents=True)
        subprocess.run(["git", "clone", "-q", "--no-local", "--no-checkout", str(ROOT), str(self.ws)], check=True)
        subprocess.run(["git", "-C", str(self.ws), "checkout", "-q", "--detach", sha], check=True)
        shared = ROOT.parent / "shared"
        if shared.is_dir():
            (self.base / "shared").symlink_to(shared.resolve())
        script = self.ws / "scripts/cleanroom.sh"
        if cleanroom:
            # The room given (--cleanroom), put in the clone in place of the
            # commit's (it makes the room around the checkout it lies in).
            if not pathlib.Path(cleanroom).is_file():
                raise SystemExit(f"ci_jobs.py: --cleanroom {cleanroom}: no such file")
            shutil.copy(cleanroom, script)
            say(f"{label}: scripts/cleanroom.sh is {cleanroom} (--cleanroom)")
        elif not script.exists():
            raise SystemExit(f"ci_jobs.py: commit {sha[:12]} has no scripts/cleanroom.sh; pass --cleanroom PATH")
        self.d = self.ws / ".ci-jobs"
        self.d.mkdir()
        with open(self.ws / ".git/info/exclude", "a") as f:
            f.write("/.ci-jobs/\n")
        (self.d / "agent.sh").write_text(AGENT)
        self.log = open(self.base / "room.log", "w")
        self.proc = subprocess.Popen(["bash", str(script), "--", "bash", str(self.d / "agent.sh"), str(self.d)],
                                     cwd=self.ws, stdout=self.log, stderr=subprocess.STDOUT)
        self.n = 0

    def run(self, script, env):
        """Runs one step; returns (rc, its files: output, env, path, summary)."""
        self.n += 1
        n = self.n
        files = {k: self.d / f"{n}.{k}" for k in ("output", "github_env", "path", "summary")}
        for f in files.values():
            f.write_text("")
        env = dict(env, GITHUB_OUTPUT=str(files["output"]), GITHUB_ENV=str(files["github_env"]),
                   GITHUB_PATH=str(files["path"]), GITHUB_STEP_SUMMARY=str(files["summary"]))
        (self.d / f"{n}.sh").write_text(script + "\n")
        (self.d / f"{n}.env").write_text("".join(f"{k}={shlex.quote(v)}\n" for k, v in env.items()))
        (self.d / f"{n}.go").touch()
        log, pos, rc_file = self.d / f"{n}.log", 0, self.d / f"{n}.rc"
        while True:
            done = rc_file.exists()
            if log.exists():
                with open(log, "rb") as f:
                    f.seek(pos)
                    chunk = f.read()
                    pos += len(chunk)
                if chunk:
                    sys.stdout.write("    " + chunk.decode(errors="replace").replace("\n", "\n    ").rstrip(" "))
                    sys.stdout.flush()
            if done:
                break
            if self.proc.poll() is not None:
                self.log.flush()
                raise SystemExit(f"ci_jobs.py: the clean room ended (exit {self.proc.returncode}); "
                                 f"see {self.base / 'room.log'}")
            time.sleep(0.5)
        print(flush=True)
        return int(rc_file.read_text()), {k: f.read_text() for k, f in files.items()}

    def close(self):
        (self.d / "stop").touch()
        # No time limit: the room removes its upper layer (the job's whole
        # build) when it ends, minutes on a loaded machine (measured: over
        # 120 s after the plan job, 2026-11-28).
        try:
            self.proc.wait()
        finally:
            self.log.close()


# What the room cannot reach: NVIDIA's repositories (CUDA 12 on Linux) and
# PyTorch's own index (every torch variant but the one PyPI serves).
UNREACHABLE_NOTE = ("Name or service not known", "Failed to establish a new connection",
                    "Temporary failure in name resolution")
PYPI = ("https://pypi.org", "https://files.pythonhosted.org")


def unreachable_only(text, row):
    """The items of a failed preflight's "the toolchain is incomplete" list
    when each names something this machine cannot reach (row `cuda_provision:
    install`: the CUDA toolkit NVIDIA's repository would have installed; a
    torch from an index other than PyPI that could not be reached by name,
    such as download.pytorch.org), else None: any other missing piece, or
    none listed, is a real failure."""
    head = text.find("the toolchain is incomplete:")
    if head < 0:
        return None
    block = text[head:].split("\n")[1:]
    items = []
    for line in block:
        m = re.match(r"^  ([A-Za-z][^:]*): (.*)$", line)  # "  CUDA 12.6: ...", "  torch 2.10.0: ..."
        if m and not m.group(1).startswith("fix"):
            items.append((m.group(1), m.group(2)))
        elif line.strip().startswith("summary:"):
            break
    if not items:
        return None
    named = []
    for what, why in items:
        if what == f"CUDA {row['cuda']}" and row.get("cuda_provision") == "install" and \
                f"no nvcc at /usr/local/cuda-{row['cuda']}/bin/nvcc" in why:
            named.append(f"CUDA {row['cuda']}'s toolkit (NVIDIA's repository, unreachable here)")
        elif what.startswith("torch ") and (index := re.search(r" from (https?://[^/\s]+)", why)) and \
                index.group(1) not in PYPI and any(note in text for note in UNREACHABLE_NOTE):
            named.append(f"{what}+cu{row['cuda'].replace('.', '')} ({index.group(1)}, unreachable here)")
        else:
            return None
    return named


class Run:
    def __init__(self, args):
        self.args = args
        self.event, self.ref = trigger(args.trigger)
        self.sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                                  check=True).stdout.strip()
        if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                          cwd=ROOT).stdout.strip():
            say(f"note: uncommitted changes are not run: the jobs run commit {self.sha[:12]}, as CI would")
        self.dir = pathlib.Path(args.workdir).resolve() / args.trigger
        self.artifacts = self.dir / "artifacts"
        self.cache = pathlib.Path(args.workdir).resolve() / "cache"
        if self.artifacts.exists():
            shutil.rmtree(self.artifacts)
        self.artifacts.mkdir(parents=True)
        self.cache.mkdir(parents=True, exist_ok=True)
        self.wf = workflow(self.sha)
        self.github = {"event_name": self.event, "ref": self.ref, "ref_name": self.ref.rsplit("/", 1)[-1],
                       "repository": "local/sageattention", "repository_owner": "local", "sha": self.sha,
                       "server_url": "https://github.com", "event": {"repository": {"name": "sageattention"}}}
        self.results = {}
        self.report = []
        self.not_compiled = set()  # kernel-objects-<group> artifacts a kernels leg did not make

    def context(self, name, **extra):
        needs = {n: self.results.get(n, {"result": "skipped", "outputs": {}})
                 for n in ([self.wf["jobs"][name]["needs"]] if isinstance(self.wf["jobs"][name].get("needs"), str)
                           else self.wf["jobs"][name].get("needs", []))}
        ok = all(v["result"] == "success" for v in needs.values())
        return {"github": self.github, "inputs": {}, "needs": needs, "secrets": {"GITHUB_TOKEN": ""},
                "status": {"success": ok, "failure": not ok, "always": True, "cancelled": False}, "steps": {},
                "runner": {"os": "Linux"}, **extra}

    # --- GitHub's actions, done by the driver --------------------------------

    def action(self, room, raw, with_, label):
        uses = raw["uses"].split("@")[0]
        ws = room.ws
        if uses == "actions/checkout":
            if "repository" not in with_:
                return True, {}, f"the checkout: a clone of {self.sha[:12]} at {ws}"
            if not UPSTREAM_COPY.is_dir():
                return False, {}, f"upstream's tree: no copy at {UPSTREAM_COPY} (GitHub is not reachable here)"
            shutil.copytree(UPSTREAM_COPY, ws / with_["path"], symlinks=True)
            return True, {}, f"upstream's tree {with_['repository']}@{with_['ref'][:12]}: ../shared's copy"
        if uses == "actions/upload-artifact":
            files = sorted(glob.glob(str(ws / with_["path"])))
            if not files and with_.get("if-no-files-found") == "error":
                return False, {}, f"no files match {with_['path']}"
            store = self.artifacts / with_["name"]
            store.mkdir(parents=True, exist_ok=True)
            for f in files:
                shutil.copy(f, store)
            return True, {}, f"uploaded {[pathlib.Path(f).name for f in files]} as {with_['name']}"
        if uses == "actions/download-artifact":
            store = self.artifacts / with_["name"]
            if not store.is_dir() and with_["name"] in self.not_compiled:
                return True, {}, (f"not downloaded: {with_['name']}'s kernels job stopped before compiling "
                                  "(no row of its group is compiled here)")
            if not store.is_dir():
                return False, {}, f"artifact {with_['name']} not found"
            shutil.copytree(store, ws / with_.get("path", "."), dirs_exist_ok=True)
            return True, {}, f"downloaded {with_['name']}"
        if uses == "actions/cache":
            entry = self.cache / with_["key"]
            hit = entry.is_dir()
            if hit:
                shutil.copytree(entry, ws / with_["path"], dirs_exist_ok=True)
            else:
                room.pending_cache = (entry, ws / with_["path"])
            return True, {"cache-hit": "true" if hit else "false"}, f"cache {'hit' if hit else 'miss'}: {with_['key']}"
        return False, {}, f"an action this script does not do: {raw['uses']}"

    # --- one job ------------------------------------------------------------------

    def job(self, name, label, row=None, prepare=(), stop_before=None, edit=None):
        """Runs job `name` (one matrix leg when `row`) in a fresh room.
        prepare: (title, script) run first, for what the job's own machine
        has and the room lacks; stop_before: a step-name prefix not run, nor
        any step after it; edit: step name prefix -> a function of the
        rendered command, for a step run otherwise than written (logged)."""
        job = self.wf["jobs"][name]
        ctx = self.context(name, **({"matrix": row} if row else {}))
        say(f"== {label}: a fresh clean room, a clone of {self.sha[:12]}")
        started = time.time()
        room = Room(self.dir, label, self.sha, self.args.cleanroom)
        room.pending_cache = None
        ctx["github"] = dict(self.github, workspace=str(room.ws))  # hashFiles() reads the clone
        outputs, env_extra, path_extra, ok, failed = {}, {}, [], True, None
        base_env = {"HOME": "/root", "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux",
                    "RUNNER_TEMP": "/tmp/runner-temp", "GITHUB_WORKSPACE": str(room.ws),
                    "GITHUB_REPOSITORY": self.github["repository"], "GITHUB_SERVER_URL": "https://github.com",
                    "GITHUB_REF": self.ref, "GITHUB_REF_NAME": self.github["ref_name"],
                    "GITHUB_EVENT_NAME": self.event, "GITHUB_SHA": self.sha, "LANG": "C.UTF-8"}
        try:
            for title, script in prepare:
                say(f"{label}: [not a workflow step] {title}")
                rc, _ = room.run(script, dict(base_env, PATH=INSIDE_PATH))
                if rc != 0:
                    ok, failed = False, f"[stand-in] {title}: exit {rc}"
                    break
            for raw in job["steps"] if ok else []:
                step_ctx = dict(ctx, steps=outputs,
                                status={"success": ok, "failure": not ok, "always": True, "cancelled": False})
                step_name = render(raw.get("name", raw.get("uses", "")), step_ctx)
                if stop_before and step_name.startswith(stop_before):
                    proof = "the preflight above is its proof" if name == "build" else "no row of its group is"
                    say(f"{label}: stops before '{step_name}' (not compiled here: {proof})")
                    break
                if not condition_holds(raw.get("if"), step_ctx):
                    say(f"{label}: skipped (if: {raw.get('if')}): {step_name}")
                    continue
                if "uses" in raw:
                    with_ = {k: render(v, step_ctx) if isinstance(v, str) else str(v).lower() if isinstance(v, bool)
                             else str(v) for k, v in raw.get("with", {}).items()}
                    if raw["uses"].startswith("actions/setup-python"):
                        step_ok, outs, what = False, {}, "setup-python: a Windows step, not run on Linux"
                    else:
                        step_ok, outs, what = self.action(room, raw, with_, label)
                    say(f"{label}: {step_name}: {what}")
                    if raw.get("id"):
                        outputs[raw["id"]] = {"outputs": outs}
                else:
                    run = render(raw["run"], step_ctx)
                    for prefix, fn in (edit or {}).items():
                        if step_name.startswith(prefix):
                            changed = fn(run)
                            say(f"{label}: [run otherwise than written] {step_name}: `{run}` -> `{changed}`")
                            run = changed
                    env = dict(base_env)
                    env.update({k: render(v, step_ctx) for k, v in job.get("env", {}).items()})
                    env.update(env_extra)
                    env.update({k: render(v, step_ctx) for k, v in raw.get("env", {}).items()})
                    env["PATH"] = ":".join([*path_extra, INSIDE_PATH])
                    say(f"{label}: run: {step_name}")
                    t0 = time.time()
                    rc, files = room.run(run, env)
                    step_ok = rc == 0
                    say(f"{label}: {step_name}: exit {rc} in {time.time() - t0:.0f} s")
                    if raw.get("id"):
                        outputs[raw["id"]] = {"outputs": dict(line.split("=", 1) for line in
                                                              files["output"].splitlines() if "=" in line)}
                    env_extra.update(dict(line.split("=", 1) for line in files["github_env"].splitlines()
                                          if "=" in line))
                    path_extra = list(reversed(files["path"].split())) + path_extra
                if not step_ok:
                    ok, failed = False, step_name
                    break
            if ok and room.pending_cache:
                entry, path = room.pending_cache
                if path.is_dir():
                    shutil.copytree(path, str(entry) + ".tmp", dirs_exist_ok=True)
                    os.replace(str(entry) + ".tmp", entry)
                    say(f"{label}: saved {path.name} to the cache as {entry.name}")
        finally:
            room.close()
        job_outputs = {k: render(v, dict(ctx, steps=outputs)) for k, v in job.get("outputs", {}).items()}
        result = "success" if ok else "failure"
        self.report.append((label, result, time.time() - started, failed or ""))
        say(f"== {label}: {result} in {time.time() - started:.0f} s" + (f" (failed at: {failed})" if failed else ""))
        return {"result": result, "outputs": job_outputs}

    # --- the trigger's Linux jobs -------------------------------------------------------

    def main(self):
        jobs = self.wf["jobs"]
        skip = set(self.args.skip)
        if "tests" not in skip and condition_holds(jobs["tests"].get("if"), self.context("tests")):
            self.results["tests"] = self.job("tests", "tests")
        self.results["plan"] = self.job("plan", "plan")
        plan = self.results["plan"]
        if plan["result"] != "success" or "build" in skip:
            return self.summary()
        rows = json.loads(plan["outputs"]["matrix"])["include"]
        linux = [r for r in rows if runs_here(r)]
        arm = [r for r in rows if r["os"].endswith("-arm")]
        say(f"plan: {len(rows)} row(s), {len(linux)} on Linux x86_64"
            + (f"; {len(arm)} on GitHub's ARM runners (tool-aarch64 and their legs): not run here, an x86_64 "
               "room (scripts/aarch64-smoke.sh and tests/build/test_aarch64_cross.py check those wheels)"
               if arm else ""))
        compile_rows = dict(self.args.compile or [])
        for spec in self.args.compile_profile:
            profile, _, arch = spec.partition("=")
            ids = [r["id"] for r in self.profile_rows(profile) if runs_here(r)]
            if not ids:
                raise SystemExit(f"ci_jobs.py: --compile-profile {spec}: the profile has no Linux x86_64 row")
            for rid in ids[:1] if arch else ids:
                compile_rows.setdefault(rid, arch)
        for rid in compile_rows:
            if rid not in {r["id"] for r in linux}:
                raise SystemExit(f"ci_jobs.py: --compile {rid}: not a Linux x86_64 row of this trigger's plan")
        say("compiled for real: " + (", ".join(f"{k}" + (f" (--archs {v})" if v else "") for k, v in
                                            compile_rows.items()) or "none") + "; every other row: to its preflight")
        groups = [g for g in json.loads(plan["outputs"].get("kernels") or '{"include":[]}')["include"]
                  if runs_here(g)]
        kernels_ctx = self.context("kernels")
        if groups and condition_holds(self.wf["jobs"]["kernels"].get("if"), kernels_ctx):
            results = [self.kernels_leg(group, linux, compile_rows) for group in groups]
            self.results["kernels"] = {"result": "failure" if "failure" in results else "success", "outputs": {}}
        else:
            self.results["kernels"] = {"result": "skipped", "outputs": {}}
        if not condition_holds(self.wf["jobs"]["build"].get("if"), self.context("build")):
            say(f"build: not run (its if: {self.wf['jobs']['build'].get('if')})")
            return self.summary()
        for row in linux:
            self.build_leg(row, compile_rows)
        return self.summary()

    def kernels_leg(self, group, linux, compile_rows):
        """The kernels job for `group`: compiled when a row of the group is
        compiled here (with its --archs, which every such row must share),
        else run to the step before the compile."""
        label = f"kernels {group['group']}"
        members = [r["id"] for r in linux if r.get("kernel_group") == group["group"]]
        archs = {compile_rows[rid] for rid in members if rid in compile_rows}
        if len(archs) > 1:
            raise SystemExit(f"ci_jobs.py: --compile: rows of kernel group {group['group']} ask for different "
                             f"--archs ({', '.join(sorted(a or 'all' for a in archs))}); their kernel objects are "
                             "compiled once for the group: give them the same")
        prepare = self.python_stand_in(group["python"])
        edit = {}
        if group["cuda_provision"] == "install":
            edit["Install CUDA"] = lambda run: f"DRY_RUN=1 {run}"
        if not archs:
            self.not_compiled.add(f"kernel-objects-{group['group']}")
            return self.job("kernels", label, group, prepare, stop_before="Compile the kernel objects",
                            edit=edit)["result"]
        (how,) = archs
        if how:
            edit["Compile the kernel objects"] = lambda run: f"{run} --archs {how}"
        return self.job("kernels", label, group, prepare, edit=edit)["result"]

    @staticmethod
    def python_stand_in(python):
        """The manylinux image's /opt/python/cpXY-cpXY, stood in for by a venv
        of Debian 12's Python 3.11 (with git and a compiler)."""
        tag = "cp" + python.replace(".", "")
        return [("the manylinux image's Python, git and compiler, stood in for by Debian 12's "
                 f"(python3 3.11 as /opt/python/{tag}-{tag})",
                 "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                 "--no-install-recommends ca-certificates git g++ python3-dev python3-venv >/dev/null && "
                 f"python3 -m venv /opt/python/{tag}-{tag} && /opt/python/{tag}-{tag}/bin/python --version")]

    def profile_rows(self, profile):
        """A profile's rows, from the plan job's own tool wheel (its static
        sagebuild runs on this host too)."""
        import zipfile
        exe = self.dir / "sagebuild"
        if not exe.exists():
            (wheel,) = sorted((self.artifacts / "sagebuild-tool").glob("sagebuild-*-manylinux_*_x86_64.whl"))
            with zipfile.ZipFile(wheel) as z:
                member = next(n for n in z.namelist() if n.rsplit("/", 1)[-1] == "sagebuild")
                exe.write_bytes(z.read(member))
            exe.chmod(0o755)
        out = subprocess.run([str(exe), "matrix", "--profile", profile, "--format", "github"], capture_output=True,
                             text=True, cwd=ROOT, check=True)
        return json.loads(out.stdout)["include"]

    def build_leg(self, row, compile_rows):
        label = f"build {row['id']}"
        python = row["python"]
        abi3 = "-abi3-" in row["id"]
        if not abi3 and python != "3.11":
            self.report.append((label, "not run", 0, f"needs CPython {python}: Debian 12 has only 3.11 (the "
                                                     "manylinux image has it at /opt/python)"))
            say(f"== {label}: not run: it needs CPython {python}, which Debian 12 lacks")
            return
        prepare = self.python_stand_in(python)
        edit = {}
        if row["cuda_provision"] == "install":
            # NVIDIA's repository is not reachable here: the step prints its
            # commands and sets CUDA_HOME; the preflight must name that toolkit.
            edit["Install CUDA"] = lambda run: f"DRY_RUN=1 {run}"
        how = compile_rows.get(row["id"])
        if how is None:
            result = self.job("build", label, row, prepare, stop_before="Build the wheel", edit=edit)
            if result["result"] == "failure":
                self.judge_unreachable(label, row)
            return
        if how:
            edit["Build the wheel"] = lambda run: f"{run} --archs {how}"
        self.job("build", label, row, prepare, edit=edit)

    def judge_unreachable(self, label, row):
        """A row's preflight that failed here only for what this machine cannot
        reach: it counts as run to that point, with what was missing named."""
        entry = self.report[-1]
        if not entry[3].startswith("Preflight"):
            return
        room = self.dir / re.sub(r"[^A-Za-z0-9._-]", "_", label)
        logs = sorted((room / "checkout/.ci-jobs").glob("*.log"), key=lambda p: int(p.stem))
        missing = unreachable_only(logs[-1].read_text() if logs else "", row)
        if missing:
            self.report[-1] = (label, "preflight to what is reachable", entry[2],
                               "the toolchain up to " + "; ".join(missing))

    def summary(self):
        say("summary:")
        counts = {}
        for label, result, seconds, note in self.report:
            print(f"  {result:40} {seconds:7.0f} s  {label}" + (f"  ({note})" if note else ""), flush=True)
            kind = result.split(" (")[0]
            counts[kind] = counts.get(kind, 0) + 1
        say(", ".join(f"{n} {kind}" for kind, n in counts.items()) +
            "; only a failure fails the run (what is not run or only preflighted is named above, and why)")
        return 1 if counts.get("failure") else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trigger", choices=["pull_request", "push", "tag"])
    parser.add_argument("--workdir", default=str(ROOT / "build/ci-jobs"),
                        help="clones, logs, artifacts and the cache (default build/ci-jobs)")
    parser.add_argument("--cleanroom", default=os.environ.get("SAGE_CLEANROOM_SCRIPT"),
                        help="the room to run each job in, copied into the clone in place of the commit's "
                             "scripts/cleanroom.sh (default: the commit's own)")
    parser.add_argument("--compile", action="append", type=lambda s: tuple(s.split("=", 1)) if "=" in s else (s, ""),
                        metavar="ROW[=ARCH]", help="build this row for real (for ARCH only: --archs ARCH appended); "
                        "every other Linux row stops after its preflight")
    parser.add_argument("--compile-profile", action="append", default=[], metavar="PROFILE[=ARCH]",
                        help="build for real every Linux row of PROFILE that the plan has (with =ARCH: its first "
                        "Linux row, for ARCH only)")
    parser.add_argument("--skip", action="append", default=[], choices=["tests", "build"],
                        help="leave a job out (reported)")
    args = parser.parse_args()
    return Run(args).main()


if __name__ == "__main__":
    sys.exit(main())
