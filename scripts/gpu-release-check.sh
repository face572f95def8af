#!/usr/bin/env bash
# One call on the GPU machine (the `device` tool) for a release candidate: the
# main job's wheel (carried in dist/) installed with pip, then
#   1. every GPU and Python-layer test against the installed wheel, with the
#      drop-in and transformers/diffusers integration tests (scripts/gpu-dropin-tests.sh:
#      carry .whl as its header says),
#   2. bench/compare.py: ours beside upstream SageAttention (carry anchor/: the
#      anchor folder, ../shared/anchors/upstream-sageattention) and torch SDPA,
#   3. compute-sanitizer memcheck and racecheck over bench/sanitizer_workload.py,
#   4. bench/bench_varlen.py.
# Logs under $OUT.  Carry: dist, .whl, anchor.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
SITE=/tmp/site
bash scripts/gpu-dropin-tests.sh --no-bench 2>&1 | tail -12
cp anchor/lib/*.so anchor/src/sageattention/ 2>/dev/null
echo "== compare"
(cd /tmp && PYTHONPATH=$SITE timeout 330 python3 "$OLDPWD/bench/compare.py" --upstream "$OLDPWD/anchor/src" \
  --json "$OUT/compare.json" 2>&1) > "$OUT/compare.log"
grep -v "^  " "$OUT/compare.log" | grep -v "^$" | head -60
echo "== sanitizers"
PYTHONPATH=$SITE timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 python3 bench/sanitizer_workload.py > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$? $(grep 'ERROR SUMMARY' "$OUT/memcheck.log")"
PYTHONPATH=$SITE timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 python3 bench/sanitizer_workload.py > "$OUT/racecheck.log" 2>&1
echo "racecheck rc=$? $(grep 'RACECHECK SUMMARY' "$OUT/racecheck.log")"
echo "== bench_varlen"
(cd /tmp && PYTHONPATH=$SITE timeout 150 python3 "$OLDPWD/bench/bench_varlen.py" 2>&1) > "$OUT/bench_varlen.log"
tail -15 "$OUT/bench_varlen.log"
