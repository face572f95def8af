"""bench/profile_points.py's table step on real ncu output (the raw page of one
`sageattn` call on the H100, causal D=128 N=1k, columns trimmed to those the
table reads): no GPU, torch or ncu needed."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "profile_points.py"
DATA = pathlib.Path(__file__).resolve().parent / "data" / "ncu_raw"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_table_rows_per_kernel():
    r = run("table", str(DATA))
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()[2:]  # after the header and its rule
    assert len(rows) == 3, r.stdout
    first, _, attn = (ln.split(" | ") for ln in rows)
    assert first[0] == "| causal 1k (call 202 µs)"
    assert first[1] == "qkv_stats_q_kernel<__half, 2, 128>"
    assert attn[1] == "attn_sm90_kernel<128, 1, 1, __half>"  # namespace and argument list dropped
    assert attn[2:5] == ["99.4", "49 %", "28.3"]  # µs, share of the call, tensor pipe %
    assert attn[-1].startswith("wait 1.63, long_scoreboard 0.77")  # stalls, largest first, `selected` left out


def test_table_without_points_says_what_to_do(tmp_path):
    r = run("table", str(tmp_path))
    assert r.returncode != 0
    assert "no profiled points" in r.stderr and "profile_points.py run" in r.stderr
