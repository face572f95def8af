"""scripts/ci_jobs.py, the driver of scripts/ci-jobs.sh: how it runs a job's
steps (the protocol with its agent, GitHub's step files, `if:`, outputs,
GITHUB_ENV / GITHUB_PATH, a failing step, the cache), checked on a small job
with the agent run on this host instead of in the clean room (the room is
scripts/cleanroom.sh's, tested with it).  What it reads of wheels.yml is
checked against the workflow itself."""
import argparse
import json
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import ci_jobs  # noqa: E402

sys.path.insert(0, str(ROOT / "tests/build"))
from test_build_e2e import sagebuild_binary  # noqa: E402


@pytest.fixture
def run(tmp_path):
    host = tmp_path / "host-room.sh"
    # Stands in for scripts/cleanroom.sh: `-- COMMAND...` run here, in the clone.
    host.write_text('#!/bin/bash\nwhile [ "$1" != -- ]; do shift; done; shift; exec "$@"\n')
    args = argparse.Namespace(trigger="pull_request", workdir=str(tmp_path / "work"), cleanroom=str(host),
                              compile=None, compile_profile=[], skip=[])
    r = ci_jobs.Run(args)
    return r


def test_a_jobs_steps_run_in_order_with_githubs_step_files(run, capsys):
    run.wf = {"jobs": {"j": {"outputs": {"answer": "${{ steps.first.outputs.answer }}"}, "steps": [
        {"name": "first", "id": "first", "run": 'echo "answer=42" >> "$GITHUB_OUTPUT"\n'
                                                 'echo "FROM_ENV=kept" >> "$GITHUB_ENV"\n'
                                                 'mkdir -p "$GITHUB_WORKSPACE/bin"\n'
                                                 'printf "#!/bin/sh\\necho tool\\n" > "$GITHUB_WORKSPACE/bin/tool"\n'
                                                 'chmod +x "$GITHUB_WORKSPACE/bin/tool"\n'
                                                 'echo "$GITHUB_WORKSPACE/bin" >> "$GITHUB_PATH"'},
        {"name": "skipped", "if": "github.event_name == 'push'", "run": "exit 3"},
        {"name": "second ${{ steps.first.outputs.answer }}", "env": {"ANSWER": "${{ steps.first.outputs.answer }}"},
         "run": 'test "$ANSWER" = 42 && test "$FROM_ENV" = kept && test "$(tool)" = tool\n'
                'test -f scripts/ci_jobs.py  # the clone is the working directory\n'},
    ]}}}
    result = run.job("j", "j")
    out = capsys.readouterr().out
    assert result == {"result": "success", "outputs": {"answer": "42"}}, out
    assert "skipped (if: github.event_name == 'push'): skipped" in out
    assert "run: second 42" in out


def test_a_failing_step_fails_the_job_and_nothing_after_it_runs(run, capsys):
    run.wf = {"jobs": {"j": {"steps": [
        {"name": "pipe", "run": "false | true"},  # bash -eo pipefail, as GitHub runs a step
        {"name": "after", "run": "echo never"},
    ]}}}
    result = run.job("j", "j")
    out = capsys.readouterr().out
    assert result["result"] == "failure", out
    assert "run: after" not in out
    assert run.report[-1][3] == "pipe"


def test_the_cache_is_saved_on_a_miss_and_restored_on_a_hit(run, capsys):
    job = {"steps": [
        {"name": "cache", "id": "c", "uses": "actions/cache@v4", "with": {"path": "out", "key": "k-1"}},
        {"name": "make", "if": "steps.c.outputs.cache-hit != 'true'", "run": "mkdir -p out && echo made > out/f"},
        {"name": "use", "run": "test \"$(cat out/f)\" = made"},
    ]}
    run.wf = {"jobs": {"j": job}}
    assert run.job("j", "first")["result"] == "success"
    assert "cache miss: k-1" in capsys.readouterr().out
    assert run.job("j", "second")["result"] == "success"
    out = capsys.readouterr().out
    assert "cache hit: k-1" in out and "skipped (if: steps.c.outputs.cache-hit != 'true'): make" in out


def test_the_jobs_it_runs_are_the_workflows_linux_jobs():
    """The driver runs tests, plan and the build legs; its stand-ins name
    steps the workflow has, so a renamed step cannot pass unnoticed."""
    wf = ci_jobs.workflow("HEAD")
    jobs = wf["jobs"]
    assert jobs["tests"]["container"] == jobs["plan"]["container"] == "debian:12"
    build_names = [s.get("name", "") for s in jobs["build"]["steps"]]
    for prefix in ("Build the wheel", "Install CUDA", "Preflight"):
        assert any(n.startswith(prefix) for n in build_names), prefix
    assert any(s.get("uses", "").startswith("actions/cache") for s in jobs["plan"]["steps"])
    kernels_names = [s.get("name", "") for s in jobs["kernels"]["steps"]]
    for prefix in ("Compile the kernel objects", "Install CUDA"):
        assert any(n.startswith(prefix) for n in kernels_names), prefix
    r = subprocess.run(["bash", str(ROOT / "scripts/ci-jobs.sh"), "nightly"], capture_output=True, text=True)
    assert r.returncode == 2 and "expected pull_request, push or tag" in r.stderr


def test_the_script_passes_each_trigger_on_unchanged():
    """Each trigger reaches ci_jobs.py as given, with the options after it
    (the usage message once swallowed the argument into a brace)."""
    for trigger in ("pull_request", "push", "tag"):
        r = subprocess.run(["bash", str(ROOT / "scripts/ci-jobs.sh"), trigger, "--help"], capture_output=True,
                           text=True)
        assert r.returncode == 0, (trigger, r.stderr)
        assert "The release workflow's Linux jobs" in r.stdout
    r = subprocess.run(["bash", str(ROOT / "scripts/ci-jobs.sh")], capture_output=True, text=True)
    assert r.returncode != 0 and "usage: bash scripts/ci-jobs.sh" in r.stderr


CU126 = {"id": "sageattention-2.2.0-torch2.10.0-cu126-abi3-linux_x86_64", "cuda": "12.6", "cuda_provision": "install"}


def test_a_preflight_missing_only_what_the_room_cannot_reach_is_told_apart(tmp_path):
    """sagebuild's own preflight output for a CUDA 12 row, as the room gets it:
    no toolkit where install-cuda.sh would have put it, and torch's index not
    resolvable by name (an .invalid host stands in for download.pytorch.org).
    Those two are named; anything else missing, or a CUDA missing on a row
    whose CUDA comes from PyPI, is a failure."""
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_PATH", "CUDACXX")}
    env["CUDA_HOME"] = "/usr/local/cuda-12.6"
    assert not pathlib.Path("/usr/local/cuda-12.6/bin/nvcc").exists()
    r = subprocess.run([str(sagebuild_binary()), "doctor", "--row", CU126["id"], "--preprocess", "--cache-dir",
                        str(tmp_path / "cache"), "--torch-index", "https://download.pytorch.org.invalid/whl/cu126"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    named = ci_jobs.unreachable_only(out, CU126)
    assert named == ["CUDA 12.6's toolkit (NVIDIA's repository, unreachable here)",
                     "torch 2.10.0+cu126 (https://download.pytorch.org.invalid, unreachable here)"], out
    assert ci_jobs.unreachable_only(out, dict(CU126, cuda_provision="pypi")) is None
    head, tail = out.split("the toolchain is incomplete:\n", 1)
    other = head + "the toolchain is incomplete:\n  host compiler: no g++ that CUDA 12.6 accepts\n" + tail
    assert ci_jobs.unreachable_only(other, CU126) is None
    resolved = out.replace("Name or service not known", "404").replace("Failed to establish a new connection", "")
    assert ci_jobs.unreachable_only(resolved, CU126) is None
    assert ci_jobs.unreachable_only("✗ row: verify failed", CU126) is None


def kernels_plan():
    """A plan's outputs with one Linux kernel group of two rows (g1), a Linux
    row alone, and a Windows group and a Linux aarch64 group (GitHub's ARM
    runners) the clean room does not run."""
    def row(rid, group, os_="ubuntu-22.04"):
        return {"id": rid, "os": os_, "cuda": "13.0", "cuda_provision": "pypi", "python": "3.12",
                "torch_index": None, "upstream_commit": None, "kernel_group": group}
    rows = [row("a-abi3-linux", "g1"), row("b-abi3-linux", "g1"), row("c-abi3-linux", ""),
            row("d-abi3-win", "g2", "windows-2022"), row("e-abi3-win", "g2", "windows-2022"),
            row("f-abi3-aarch64", "g3", "ubuntu-24.04-arm"), row("g-abi3-aarch64", "g3", "ubuntu-24.04-arm")]
    kernels = [{"group": "g1", "row": "a-abi3-linux", "os": "ubuntu-22.04", "cuda": "13.0", "cuda_provision": "pypi",
                "python": "3.12", "rows": ["a-abi3-linux", "b-abi3-linux"]},
               {"group": "g2", "row": "d-abi3-win", "os": "windows-2022", "cuda": "13.0", "cuda_provision": "pypi",
                "python": "3.12", "rows": ["d-abi3-win", "e-abi3-win"]},
               {"group": "g3", "row": "f-abi3-aarch64", "os": "ubuntu-24.04-arm", "cuda": "13.0",
                "cuda_provision": "install", "python": "3.12", "rows": ["f-abi3-aarch64", "g-abi3-aarch64"]}]
    return {"matrix": json.dumps({"include": rows}), "rows": str(len(rows)),
            "kernels": json.dumps({"include": kernels}), "kernel_groups": str(len(kernels))}


def record_jobs(run, monkeypatch, outputs):
    """run.job replaced by a recorder: (job, label, stop_before, the compile
    step's edit applied to "CMD")."""
    calls = []

    def job(name, label, row=None, prepare=(), stop_before=None, edit=None):
        edits = {k: fn("CMD") for k, fn in (edit or {}).items()}
        calls.append((name, label, stop_before, edits.get("Compile the kernel objects", edits.get("Build the wheel"))))
        return {"result": "success", "outputs": outputs if name == "plan" else {}}

    monkeypatch.setattr(run, "job", job)
    run.wf = yaml.safe_load((ROOT / ".github/workflows/wheels.yml").read_text())
    run.args.skip = ["tests"]
    return calls


def test_kernels_legs_run_before_the_build_legs_and_compile_only_for_a_compiled_row(run, monkeypatch):
    calls = record_jobs(run, monkeypatch, kernels_plan())
    run.args.compile = [("b-abi3-linux", "8.0")]
    assert run.main() == 0
    assert calls == [("plan", "plan", None, None),
                     ("kernels", "kernels g1", None, "CMD --archs 8.0"),
                     ("build", "build a-abi3-linux", "Build the wheel", None),
                     ("build", "build b-abi3-linux", None, "CMD --archs 8.0"),
                     ("build", "build c-abi3-linux", "Build the wheel", None)]
    assert run.not_compiled == set()


def test_a_kernels_leg_no_compiled_row_needs_stops_before_compiling(run, monkeypatch, tmp_path):
    calls = record_jobs(run, monkeypatch, kernels_plan())
    assert run.main() == 0
    assert calls[1] == ("kernels", "kernels g1", "Compile the kernel objects", None)
    assert [c[0] for c in calls] == ["plan", "kernels", "build", "build", "build"]
    assert run.not_compiled == {"kernel-objects-g1"}
    # Its rows' download of the artifact it never made is reported, not failed;
    # any other artifact missing still fails the step.
    room = argparse.Namespace(ws=tmp_path)
    raw = {"uses": "actions/download-artifact@v4"}
    ok, _, what = run.action(room, raw, {"name": "kernel-objects-g1", "path": "kernel-objects"}, "build a")
    assert ok and "not downloaded: kernel-objects-g1's kernels job stopped before compiling" in what
    ok, _, what = run.action(room, raw, {"name": "kernel-objects-g9", "path": "kernel-objects"}, "build a")
    assert not ok and what == "artifact kernel-objects-g9 not found"


def test_an_arm_runners_row_is_refused_for_a_compile_here(run, monkeypatch):
    record_jobs(run, monkeypatch, kernels_plan())
    run.args.compile = [("f-abi3-aarch64", "")]
    with pytest.raises(SystemExit, match="not a Linux x86_64 row of this trigger's plan"):
        run.main()


def test_rows_of_one_kernel_group_compiled_for_different_archs_are_refused(run, monkeypatch):
    record_jobs(run, monkeypatch, kernels_plan())
    run.args.compile = [("a-abi3-linux", "8.0"), ("b-abi3-linux", "9.0")]
    with pytest.raises(SystemExit, match="rows of kernel group g1 ask for different --archs"):
        run.main()
