#!/usr/bin/env bash
# One device call for the sm90 v2 kernel: smoke-check every carried variant
# (.devcarry/v_*), the GPU tests with the dev build (python/), the side-by-side
# benchmark against upstream (anchor/) and SDPA, quick variant benchmarks, memcheck.
#   kernels/dev/device_v2.sh [smoke] [tests] [compare] [variants] [profile] [ncu] [stalls] [hotspots] [sanitize]
set -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sa_out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
summary=()
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
[ -d anchor ] && cp anchor/lib/*.so anchor/src/sageattention/ 2>/dev/null
for step in "$@"; do
  case $step in
    smoke)
      for v in python .devcarry/v_*; do
        PYTHONPATH=$PWD/$v timeout 120 python3 kernels/dev/smoke.py 2>&1 | tail -6 | tee -a "$OUT/smoke.log"
        summary+=("smoke $v: rc=$?")
      done;;
    tests)
      PYTHONPATH=$PWD/python timeout 420 python3 -m pytest tests/gpu tests/python -q -x --timeout=300 -p no:cacheprovider 2>&1 \
        | tee "$OUT/pytest.log" | tail -15
      summary+=("pytest: $(tail -1 "$OUT/pytest.log")");;
    compare)
      PYTHONPATH=$PWD/python timeout 300 python3 bench/compare.py --upstream anchor/src --json "$OUT/compare.json" 2>&1 \
        | tee "$OUT/compare.log" | grep -v "^  "
      summary+=("compare done");;
    variants)
      for v in ${SA_VARIANTS:-python .devcarry/v_*}; do
        echo "== $v" | tee -a "$OUT/variants.log"
        PYTHONPATH=$PWD/$v timeout 90 python3 bench/compare.py --tables d128,causal,d64 --seqs ${SA_VARIANT_SEQS:-2048,8192,32768} 2>&1 \
          | grep -E "^\| (ours|cudnn) " | tee -a "$OUT/variants.log"
      done
      summary+=("variants done");;
    profile)  # per-kernel GPU time of one e2e call, and the host's issue time
      for n in ${SA_PROFILE_SEQS:-1024 4096 16384}; do
        PYTHONPATH=$PWD/python timeout 60 python3 bench/profile_e2e.py --seq $n --dim 128 2>&1 | tee -a "$OUT/profile.log" | grep -v "^ *$"
      done;;
    ncu)  # the attention kernel of one call: ncu's full set, the headline lines printed
      for shape in ${SA_NCU_SHAPES:-"fp8 128 8192 0" "fp8 64 8192 0" "fp8 128 2048 1"}; do
        f="$OUT/ncu_$(echo $shape | tr ' ' _).txt"
        PYTHONPATH=$PWD/python timeout 150 ncu --kernel-name regex:attn_sm90_kernel --launch-skip 2 --launch-count 1 \
          --set full python3 kernels/dev/ncu_one.py $shape > "$f" 2>&1
        echo "== ncu $shape"; grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps|Registers Per Thread|Achieved Occupancy|L2 Hit Rate|DRAM Throughput" "$f" | head -16
        grep -E "^ +(Stall|Warp Cycles)" "$f" | head -4
      done;;
    stalls)  # why the attention kernel's warps wait: ncu's stall reasons per issued instruction
      for shape in ${SA_NCU_SHAPES:-"fp8 128 1024 0"}; do
        f="$OUT/stalls_$(echo $shape | tr ' ' _).txt"
        PYTHONPATH=$PWD/python timeout 150 ncu --kernel-name regex:attn_sm90_kernel --launch-skip 2 --launch-count 1 \
          --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,gpu__time_duration.sum" \
          python3 kernels/dev/ncu_one.py $shape > "$f" 2>&1
        echo "== stalls $shape"; grep -E "stalled|duration" "$f" | awk '$NF+0 > 0.05' | sort -k3 -g -r | head -14
      done;;
    hotspots)  # where the attention kernel's warps stall, per SASS instruction (ncu's source page as CSV)
      for shape in ${SA_NCU_SHAPES:-"fp8 128 4096 0"}; do
        f="$OUT/hot_$(echo $shape | tr ' ' _)"
        PYTHONPATH=$PWD/${SA_HOT_PKG:-python} timeout 200 ncu --kernel-name regex:attn_sm90_kernel --launch-skip 2 --launch-count 1 \
          --section SourceCounters --section WarpStateStats --import-source no -f -o "$f" python3 kernels/dev/ncu_one.py $shape > "$f.log" 2>&1
        timeout 120 ncu -i "$f.ncu-rep" --page source --csv --print-source sass > "$f.csv" 2> "$f.err"
        echo "== hotspots $shape: $(wc -l < "$f.csv") SASS lines"; head -c 600 "$f.csv"; echo
        summary+=("hotspots $shape rc=$?")
      done;;
    sanitize)
      PYTHONPATH=$PWD/python timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 python3 kernels/dev/sanitize_small.py > "$OUT/memcheck.log" 2>&1; rc1=$?
      tail -3 "$OUT/memcheck.log"
      PYTHONPATH=$PWD/python timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 python3 kernels/dev/sanitize_small.py > "$OUT/racecheck.log" 2>&1; rc2=$?
      tail -3 "$OUT/racecheck.log"
      summary+=("memcheck rc=$rc1 racecheck rc=$rc2");;
  esac
done
printf '%s\n' "${summary[@]}"
