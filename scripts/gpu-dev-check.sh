#!/usr/bin/env bash
# One device call: build the dev extension (SA_ARCHS=90: quant/pv_fp16/pv_fp8
# for sm_90, sm90 for sm_90a), the GPU + Python-layer tests (on a 9.0 GPU the
# sm90 kernels; tests0: again with SAGEATTN_SM90=0, the mma.sync kernels),
# sanitizers, the prebuilt attn_bench variants in .devcarry/, and the
# end-to-end benchmark.
#   scripts/gpu-dev-check.sh [build] [tests] [testsall] [tests0] [sanitize] [variants] [varfull] [quickbench] [bench]
set -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/sa_out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
summary=()
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
for step in "$@"; do
  case $step in
    build) SA_ARCHS=90 SA_JOBS=16 python3 kernels/tools/build_ext.py > "$OUT/build.log" 2>&1; rc=$?
           grep -E "registers|error" "$OUT/build.log" | sort | uniq -c | head; tail -2 "$OUT/build.log"; summary+=("build rc=$rc");;
    tests) timeout 500 python3 -m pytest tests/gpu tests/python -q -x --timeout=400 -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log" | tail -25
           summary+=("pytest (sm90 on): $(tail -1 "$OUT/pytest.log")");;
    testsall) timeout 500 python3 -m pytest tests/gpu tests/python -q --timeout=400 -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log" | tail -60
           summary+=("pytest: $(tail -1 "$OUT/pytest.log")");;
    tests0) SAGEATTN_SM90=0 timeout 400 python3 -m pytest tests/gpu -q -x --timeout=300 -p no:cacheprovider 2>&1 | tee "$OUT/pytest0.log" | tail -5
           summary+=("pytest (SAGEATTN_SM90=0: mma.sync): $(tail -1 "$OUT/pytest0.log")");;
    sanitize)
      timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 python3 bench/sanitizer_workload.py > "$OUT/memcheck.log" 2>&1; rc1=$?
      timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 python3 bench/sanitizer_workload.py > "$OUT/racecheck.log" 2>&1; rc2=$?
      tail -2 "$OUT/memcheck.log"; tail -2 "$OUT/racecheck.log"
      summary+=("memcheck rc=$rc1 racecheck rc=$rc2");;
    variants)
      for b in .devcarry/attn_bench_*; do
        for args in "4 32 128 0 2048 16384" ${SA_VARIANT_ARGS:+"$SA_VARIANT_ARGS"}; do
          echo "== $b $args" | tee -a "$OUT/variants.log"
          SAGEATTN_SM90=0 timeout 120 "$b" $args 2>&1 | tee -a "$OUT/variants.log"
        done
      done
      summary+=("variants done");;
    varfull)  # the default variant over D, causal
      for args in "4 32 128 0 2048 4096 16384" "4 32 64 0 2048 16384" "4 32 128 1 2048 16384" "4 32 64 1 16384"; do
        SAGEATTN_SM90=0 timeout 120 .devcarry/attn_bench_${SA_DEFAULT_VARIANT:-def} $args 2>&1 | tee -a "$OUT/variants.log"
      done;;
    quickbench) timeout 300 python3 bench/bench_attn.py --seqs 2048,4096,16384 --dims 128 --causal 0 2>&1 | tee "$OUT/bench.log" | tail -8; summary+=("quickbench done");;
    bench) timeout 560 python3 bench/bench_attn.py 2>&1 | tee "$OUT/bench.log" | tail -30; summary+=("bench done");;
  esac
done
printf '%s\n' "${summary[@]}"
