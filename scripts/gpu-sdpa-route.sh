#!/usr/bin/env bash
# One device call for patch_sdpa's speed routing (issue 39): build the dev extension, measure the SDPA
# crossover (bench/sdpa_crossover.py measure; the file is copied into python/sageattention/ for what
# follows and comes back under $OUT), check patch_sdpa against SDPA with it, profile a 1k call's kernels,
# the GPU suite, and bench/compare.py twice (ours beside upstream and SDPA; UPSTREAM=folder of upstream's
# package with its extensions, default ../.anchor/src).
#   scripts/gpu-sdpa-route.sh [build] [measure] [check] [ncu1k] [routetests] [tests] [compare]
# Files under $OUT (at most 8 come back): build.log measure.log sdpa_crossover_sm90.json check.log ncu1k.txt
# pytest.log compare.log.
set -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/sa_out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
UPSTREAM=${UPSTREAM:-../.anchor/src}
summary=()
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
date -u
for step in "$@"; do
  t0=$(date +%s)
  case $step in
    build)
      SA_ARCHS=90 SA_JOBS=16 SA_FLAGS_SM90="--split-compile=8" SA_FLAGS_QUANT="--split-compile=4" \
        python3 kernels/tools/build_ext.py > "$OUT/build.log" 2>&1; rc=$?
      tail -2 "$OUT/build.log"; summary+=("build rc=$rc");;
    measure)
      timeout 420 python3 bench/sdpa_crossover.py measure --out "$OUT/sdpa_crossover_sm90.json" 2>&1 \
        | tee "$OUT/measure.log" | tail -30; rc=$?
      cp "$OUT/sdpa_crossover_sm90.json" python/sageattention/ && summary+=("measure rc=$rc (table installed)");;
    check)
      timeout 400 python3 bench/sdpa_crossover.py check --dtypes fp16 2>&1 | tee "$OUT/check.log" | tail -62
      summary+=("check: $(tail -1 "$OUT/check.log")");;
    ncu1k)  # every kernel of one sageattn call, B4 H32 N1k hd128 fp16, then one cuDNN SDPA call
      timeout 200 ncu --clock-control none --launch-skip 0 --launch-count 40 \
        --metrics gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
        python3 bench/ncu_call.py sageattn 128 1024 0 > "$OUT/ncu1k.txt" 2>&1
      awk '/^  [^ ].*\(/ {name=$1} /gpu__time_duration.sum/ {d=$NF" "$(NF-1)} /dram__bytes.sum/ {b=$NF" "$(NF-1)}
           /dram__throughput/ {print name, d, b, $NF"%"}' "$OUT/ncu1k.txt" | tail -8
      summary+=("ncu1k rc=$?");;
    routetests)
      timeout 300 python3 -m pytest tests/python/test_sdpa_route.py tests/gpu/test_dropin_gpu.py -q -k "route or patch" \
        --timeout=250 -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log" | tail -15
      summary+=("route tests: $(tail -1 "$OUT/pytest.log")");;
    tests)
      timeout ${TESTS_TIMEOUT:-540} python3 -m pytest tests/gpu tests/python -q --timeout=300 -p no:cacheprovider 2>&1 \
        | tee "$OUT/pytest.log" | tail -25
      summary+=("pytest: $(tail -1 "$OUT/pytest.log")");;
    compare)
      cp "$UPSTREAM"/../lib/*.so "$UPSTREAM/sageattention/" 2>/dev/null
      for run in 1 2; do
        echo "=== compare run $run $(date -u)" >> "$OUT/compare.log"
        timeout 280 python3 bench/compare.py --upstream "$UPSTREAM" --tables ${COMPARE_TABLES:-d128,causal,d64,d64c,models} \
          >> "$OUT/compare.log" 2>&1
      done
      tail -40 "$OUT/compare.log"; summary+=("compare done");;
  esac
  summary[-1]+=" ($(( $(date +%s) - t0 )) s)"
done
printf '%s\n' "${summary[@]}"
