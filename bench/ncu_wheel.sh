#!/usr/bin/env bash
# ncu of the attention kernel in the installed wheel (dist/), one shape a pass:
# the headline (time, issue slots, tensor pipe, warps) and the top stall reasons.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target /tmp/site dist/*.whl 2>&1 | grep -v WARNING
export PYTHONPATH=/tmp/site
for shape in "fp8 128 2048 0" "fp8 128 32768 0" "fp8 128 4096 1" "fp8 128 32768 1" "fp8 64 16384 0" "fp8 128 1024 0"; do
  f="$OUT/ncu_$(echo "$shape" | tr ' ' _).txt"
  timeout 120 ncu --kernel-name regex:attn_sm90_kernel --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section Occupancy \
    --section MemoryWorkloadAnalysis --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    python3 bench/ncu_call.py $shape > "$f" 2>&1
  echo "== $shape: $(grep -E '^ +Duration' "$f" | awk '{print $(NF-1), $NF}' | head -1)"
  grep -E "Issue Slots Busy|Eligible Warps Per|L2 Hit Rate|DRAM Throughput|Tensor .*utilized|Achieved Occupancy" "$f" | sed 's/  */ /g' | head -6
  grep -E "stalled_.*ratio" "$f" | awk '{print $1, $NF}' | sort -k2 -g -r | head -5 | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
