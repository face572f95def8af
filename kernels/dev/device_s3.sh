#!/usr/bin/env bash
# Session 3 device call: the dev build (python/, fused quantization) against the
# main job's wheel of the previous head (dist/, installed to /tmp/base), GPU
# tests, per-kernel profile and the sm90 work-tile trace (.devcarry/v_trace).
# SA_AB_PKGS: the packages to put beside the base (default: python/).
# SA_SAN_PKG: the package the sanitizers run (default: python/).  SA_TRACE_PKGS: the
# SA90_TRACE=1 packages to trace; SA_TRACE_SHAPES: "B H N D [causal]" shapes separated by ';'.
#   kernels/dev/device_s3.sh [tests] [ab] [profile] [trace] [sanitize] [ncuquant]
set -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sa_out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
[ -d anchor ] && cp anchor/lib/*.so anchor/src/sageattention/ 2>/dev/null
for step in "$@"; do
  case $step in
    tests)
      PYTHONPATH=$PWD/python timeout 400 python3 -m pytest tests/gpu tests/python -q -x -p no:cacheprovider 2>&1 \
        | tee "$OUT/pytest.log" | tail -8;;
    ab)  # A/B, same call: the previous head's wheel, then the dev build
      [ -d /tmp/base/sageattention ] || python3 -m pip install -q --no-deps --target /tmp/base dist/*.whl 2>&1 | tail -2
      for v in /tmp/base ${SA_AB_PKGS:-$PWD/python}; do
        echo "== $v" | tee -a "$OUT/ab.log"
        PYTHONPATH=$v timeout 200 python3 bench/compare.py --tables ${SA_AB_TABLES:-d128,causal,d64,models} \
          --seqs ${SA_AB_SEQS:-1024,2048,4096,32768} 2>&1 | grep -E "^\| (ours|cudnn|Flux|Wan|LLM)" | tee -a "$OUT/ab.log"
      done;;
    profile)
      for n in ${SA_PROFILE_SEQS:-1024 4096}; do
        PYTHONPATH=$PWD/python timeout 60 python3 bench/profile_e2e.py --seq $n --dim 128 2>&1 | grep -v "^ *$\|Warn\|warn" \
          | tee -a "$OUT/profile.log"
      done;;
    trace)
      mhz=$(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits | head -1)
      for pkg in ${SA_TRACE_PKGS:-$PWD/.devcarry/v_trace}; do
        IFS=';' read -ra shapes <<< "${SA_TRACE_SHAPES:-4 32 1024 128;4 32 4096 128;1 8 32768 128;4 32 4096 128 causal}"
        for shape in "${shapes[@]}"; do
          f="$OUT/trace_$(basename $pkg)_$(echo $shape | tr ' ' _).txt"
          PYTHONPATH=$pkg timeout 60 python3 kernels/dev/trace_sm90.py $shape > "$f" 2>&1
          echo "== trace $(basename $pkg) $shape"
          python3 kernels/dev/trace_sm90.py --analyze "$f" "${SA_MHZ:-1755}" 2>&1 | tee -a "$OUT/trace.log"
        done
      done;;
    sanitize)
      for tool in memcheck racecheck; do
        PYTHONPATH=${SA_SAN_PKG:-$PWD/python} timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
          python3 kernels/dev/sanitize_small.py > "$OUT/$tool.log" 2>&1
        echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log")"
      done;;
    ncuquant)  # the two quantization kernels of the one-call op, dev build
      for n in ${SA_NCU_SEQS:-1024 4096}; do
        f="$OUT/ncu_quant_$n.txt"
        PYTHONPATH=$PWD/python timeout 120 ncu --kernel-name regex:qkv_ --launch-skip 4 --launch-count 2 \
          --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats \
          --section SchedulerStats --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
          python3 kernels/dev/ncu_one.py fp8 128 $n 0 > "$f" 2>&1
        echo "== quant N=$n"
        grep -E "^  [a-z_]+.*qkv_|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Issue Slots Busy|Eligible Warps" "$f" \
          | sed 's/  */ /g' | head -40
        grep -E "stalled_.*ratio" "$f" | awk '{print $1, $NF}' | sort -k2 -g -r | head -8 \
          | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
      done;;
  esac
done
