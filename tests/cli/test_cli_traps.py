"""The command line as a new user meets it: options before or
after the subcommand, every mistake answered before any work with a message
that names the argument, what was expected and how to fix it, and a
non-zero exit; `doctor` fails when it prints a missing piece; `explain`
decodes wheel names and build tags.  Runs the built binary ($SAGEBUILD, else
build/tools/sagebuild/cli/sagebuild) from the checkout; skips without it."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAGEBUILD = pathlib.Path(os.environ.get("SAGEBUILD", ROOT / "build/tools/sagebuild/cli/sagebuild"))
pytestmark = pytest.mark.skipif(not SAGEBUILD.exists(),
                                reason=f"sagebuild binary not found at {SAGEBUILD}; build it or set SAGEBUILD")


def sb(*args, env=None, cwd=ROOT):
    return subprocess.run([str(SAGEBUILD), *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, **(env or {})})


def row_with_cuda(cuda, platform="linux_x86_64"):
    rows = json.loads(sb("matrix", "--profile", "release", "--format", "json").stdout)["rows"]
    return next(r["id"] for r in rows if r["cuda"] == cuda and r["platform"] == platform)


def test_an_option_before_the_subcommand_is_the_subcommands():
    before = sb("--profile", "sage2-all", "matrix")
    after = sb("matrix", "--profile", "sage2-all")
    default = sb("matrix")
    assert before.returncode == after.returncode == 0, before.stderr
    assert before.stdout == after.stdout
    assert before.stdout != default.stdout


def test_a_mistyped_profile_fails_wherever_it_is_written():
    for args in (["--profile", "stabel", "doctor"], ["doctor", "--profile", "stabel"], ["--profile", "stabel", "matrix"]):
        r = sb(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "unknown profile 'stabel'" in r.stderr and "stable" in r.stderr.split("'stabel'", 1)[1], r.stderr


def test_an_option_the_subcommand_does_not_take_is_an_error_naming_its_help():
    r = sb("--dry-run", "matrix")
    assert r.returncode == 2
    assert "--dry-run" in r.stderr and "`sagebuild matrix --help`" in r.stderr, r.stderr


def test_jobs_must_be_a_whole_number_of_at_least_one():
    for bad in ("0", "-1", "x", "1.5"):
        r = sb("-j", bad, "--dry-run")
        assert r.returncode == 2, (bad, r.stderr)
        assert "--jobs: expected a whole number >= 1" in r.stderr, r.stderr
        assert "1.79e308" not in r.stderr


def test_archs_are_checked_against_the_kernel_families_and_the_rows_cuda():
    r = sb("--archs", "7.0", "--dry-run")
    assert r.returncode == 2, r.stdout
    assert "--archs 7.0: no kernel family is built for 7.0" in r.stderr, r.stderr
    assert "quant >= 8.0" in r.stderr and "fix:" in r.stderr
    row = row_with_cuda("13.0")
    r = sb("--archs", "9.5", "--row", row, "--dry-run")
    assert r.returncode == 2, r.stdout
    assert "--archs 9.5: row " + row in r.stderr and "CUDA 13.0" in r.stderr and "fix:" in r.stderr, r.stderr
    assert "no CUDA release in the matrix compiles it" in r.stderr


def test_out_that_is_a_file_or_empty_is_refused_before_any_work(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    for args, says in ((["--out", str(f)], "exists and is not a directory"),
                       (["--out", str(f / "sub")], "is a file, not a directory"),
                       (["--out", ""], "--out: expected a directory to write to, got an empty name")):
        r = sb(*args, "--dry-run")
        assert r.returncode == 2, (args, r.stdout)
        assert says in r.stderr, r.stderr
        assert "internal error" not in r.stderr
    r = sb("index", str(tmp_path), "--out", "")
    assert r.returncode == 2 and "--out: expected a directory" in r.stderr, r.stderr


def test_a_mistyped_row_lists_rows_on_lines_of_their_own():
    r = sb("--row", "nosuchrow", "--dry-run")
    assert r.returncode == 2
    assert "\\x0a" not in r.stderr
    assert "rows look like:\n  " in r.stderr, r.stderr


def test_doctor_exits_non_zero_whenever_it_prints_a_missing_piece(tmp_path):
    row = row_with_cuda("13.0")
    # A toolkit that is not there: a ✗ line, so exit 1.
    r = sb("doctor", "--row", row, "--cuda-home", str(tmp_path / "no-cuda"), env={"XDG_CACHE_HOME": str(tmp_path)})
    assert "\u2717" in r.stdout, r.stdout
    assert r.returncode == 1, r.stdout
    # Whatever this machine has: ✗ and exit 0 never go together.
    r = sb("doctor", env={"XDG_CACHE_HOME": str(tmp_path)})
    assert ("\u2717" in r.stdout) == (r.returncode != 0), r.stdout


def test_explain_decodes_names_and_tags_in_ascii_or_utf8():
    r = sb("explain", "sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl", "21100.130", "+cu128torch2.9.0",
           env={"LANG": "C", "LC_ALL": "", "LC_CTYPE": ""})
    assert r.returncode == 0, r.stderr
    assert "  [ok] PyTorch version tag: 280 (2.8.0)\n  [ok] CUDA version tag: 129 (12.9)\n" in r.stdout
    assert "  [ok] Python tag: cp312 (CPython 3.12)\n" in r.stdout
    assert "  [ok] PyTorch version tag: 21100 (2.11.0)\n" in r.stdout
    assert "  [ok] PyTorch (local version): torch2.9.0 (2.9.0)\n  [ok] CUDA (local version): cu128 (12.8)\n" in r.stdout
    utf8 = sb("explain", "280.129", env={"LC_ALL": "C.UTF-8"})
    assert "  \u2705 PyTorch version tag: 280 (2.8.0)" in utf8.stdout
    js = json.loads(sb("explain", "--json", "280.129").stdout)
    assert js[0]["ok"] is True and js[0]["components"][0]["decoded"] == "2.8.0"


def test_explain_says_which_part_does_not_decode():
    r = sb("explain", "2110.129", env={"LANG": "C"})
    assert r.returncode == 1
    assert "  [x] build tag '2110.129': " in r.stdout and "expected <torch code>.<CUDA code>" in r.stdout, r.stdout
    # One part too few: the build tag is read as the Python tag, and said so.
    r = sb("explain", "sageattention-2.2.0-280.129-cp312-linux_x86_64.whl", env={"LANG": "C"})
    assert r.returncode == 1, r.stdout
    assert "  [x] Python tag: 280.129 (280: not a tag sagebuild knows" in r.stdout, r.stdout
    assert "  [x] F6: interpreter tag '280' is not a Python identifier; expected e.g. py3, cp312" in r.stdout
    r = sb("explain", "sageattention-2.2.0-cp312-linux_x86_64.whl", env={"LANG": "C"})
    assert r.returncode == 1 and "  [x] F2: " in r.stdout, r.stdout
