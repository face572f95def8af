"""tools/sagebuild/wine/run_wine.sh repeats a run once where wine itself failed,
and only there.

The script runs under a stand-in `wine` (a shell script) so that its own logic
is what is tested: the probe, the repeat on wine's own start-up errors, a real
test failure passed through with its exit status, and the skip without wine.
The Windows suites themselves run under real wine in CTest ("windows: ...")."""
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN_WINE = ROOT / "tools/sagebuild/wine/run_wine.sh"

# $1 is the program.  The probe (sb_win_child.exe) always starts.  A suite
# prints $FIRST on its first start when $FIRST is set, then $OUTPUT with
# exit $RC; each start is counted in $STATE/starts.
FAKE_WINE = r"""#!/bin/sh
case "$1" in
*sb_win_child.exe) exit 0 ;;
esac
echo x >>"$STATE/starts"
if [ -n "${FIRST:-}" ] && [ ! -e "$STATE/first-done" ]; then
  touch "$STATE/first-done"
  printf '%s\r\n' "$FIRST"
  exit 1
fi
printf '%s\r\n' "$OUTPUT"
exit "$RC"
"""


def run_suite(tmp_path, wine, **env):
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    proc = subprocess.run(
        ["sh", str(RUN_WINE), str(wine), str(out), "suite", "pack"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "STATE": str(state), **env},
    )
    starts = (state / "starts").read_text().count("x") if (state / "starts").exists() else 0
    return proc, starts


def fake_wine(tmp_path):
    wine = tmp_path / "wine"
    wine.write_text(FAKE_WINE)
    wine.chmod(0o755)
    return wine


def test_a_suite_that_passes_runs_once(tmp_path):
    proc, starts = run_suite(tmp_path, fake_wine(tmp_path), OUTPUT="All tests passed", RC="0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert starts == 1
    assert "All tests passed" in proc.stdout
    assert "note:" not in proc.stdout


def test_wine_failing_to_load_kernel32_is_run_again(tmp_path):
    first = "wine: could not load kernel32.dll, status c0000135"
    proc, starts = run_suite(tmp_path, fake_wine(tmp_path), FIRST=first, OUTPUT="All tests passed", RC="0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert starts == 2
    assert f"note: wine itself failed running sb_pack_tests.exe ~[posix] ({first}); run again" in proc.stdout
    assert "All tests passed" in proc.stdout


def test_wine_losing_its_server_is_run_again(tmp_path):
    first = "wine client error:0: recvmsg: Connection reset by peer"
    proc, starts = run_suite(tmp_path, fake_wine(tmp_path), FIRST=first, OUTPUT="All tests passed", RC="0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert starts == 2


def test_a_failing_test_case_is_not_repeated_and_keeps_its_status(tmp_path):
    proc, starts = run_suite(tmp_path, fake_wine(tmp_path), OUTPUT="test cases: 3 | 2 passed | 1 failed", RC="3")
    assert proc.returncode == 3
    assert starts == 1
    assert "1 failed" in proc.stdout
    assert "note:" not in proc.stdout


def test_wine_failing_twice_fails_the_test(tmp_path):
    # the repeat is once: wine's error on the second start is the test's result
    first = "wine: could not load kernel32.dll, status c0000135"
    proc, starts = run_suite(tmp_path, fake_wine(tmp_path), FIRST=first, OUTPUT=first, RC="1")
    assert proc.returncode == 1
    assert starts == 2
    assert proc.stdout.rstrip().endswith(first)


def test_without_wine_the_test_is_skipped(tmp_path):
    proc, starts = run_suite(tmp_path, "")
    assert proc.returncode == 77
    assert "skipped: no wine" in proc.stdout
    assert starts == 0
