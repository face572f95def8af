#!/usr/bin/env bash
# One device call: (re)build if asked, tests, sanitizers, benchmark.
# usage: kernels/dev/device_check.sh [build] [tests] [sanitize] [bench] [quickbench]
set -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sa_out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
summary=()
for step in "$@"; do
  case $step in
    build) SA_JOBS=16 python3 kernels/dev/build_ext.py > "$OUT/build.log" 2>&1; rc=$?; tail -3 "$OUT/build.log"; summary+=("build rc=$rc");;
    tests) timeout 400 python3 -m pytest tests/gpu tests/python -q -x --timeout=300 -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log" | tail -40; summary+=("pytest: $(tail -1 "$OUT/pytest.log")");;
    testsall) timeout 400 python3 -m pytest tests/gpu tests/python -q --timeout=300 -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log" | tail -60; summary+=("pytest: $(tail -1 "$OUT/pytest.log")");;
    sanitize)
      timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 python3 kernels/dev/sanitize_small.py > "$OUT/memcheck.log" 2>&1; rc1=$?
      timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 python3 kernels/dev/sanitize_small.py > "$OUT/racecheck.log" 2>&1; rc2=$?
      tail -3 "$OUT/memcheck.log"; tail -3 "$OUT/racecheck.log"
      summary+=("memcheck rc=$rc1 racecheck rc=$rc2");;
    bench) timeout 500 python3 bench/bench_attn.py 2>&1 | tee "$OUT/bench.log" | tail -30; summary+=("bench done");;
    quickbench) timeout 300 python3 bench/bench_attn.py --seqs 2048,16384 --dims 128 --causal 0 2>&1 | tee "$OUT/bench.log" | tail -12; summary+=("quickbench done");;
  esac
done
printf '%s\n' "${summary[@]}"
