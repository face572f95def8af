#!/usr/bin/env bash
# Session 3 device call: the dev build (python/, fused quantization) against the
# main job's wheel of the previous head (dist/, installed to /tmp/base), GPU
# tests, per-kernel profile and the sm90 work-tile trace (.devcarry/v_trace).
# SA_AB_PKGS: the packages to put beside the base (default: python/).
#   kernels/dev/device_s3.sh [tests] [ab] [profile] [trace]
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
      for shape in ${SA_TRACE_SHAPES:-"4 32 1024 128" "4 32 4096 128" "1 8 32768 128" "4 32 4096 128 causal"}; do
        f="$OUT/trace_$(echo $shape | tr ' ' _).txt"
        PYTHONPATH=$PWD/.devcarry/v_trace timeout 60 python3 kernels/dev/trace_sm90.py $shape > "$f" 2>&1
        echo "== trace $shape"; python3 kernels/dev/trace_sm90.py --analyze "$f" "${SA_MHZ:-1755}" 2>&1 | tee -a "$OUT/trace.log"
      done;;
  esac
done
