#!/usr/bin/env bash
# The RTX paths' measurement on the H100 proxy, in one device call: our
# mma.sync kernels (SAGEATTN_SM90=0) beside upstream's own sm80 / sm89 kernels
# built for 9.0 from upstream's tree by sagebuild, and torch SDPA, with
# bench/compare.py, RUNS times (default 2) one after the other:
#   --ours fp16: head dim 128 non-causal and causal, head dim 64, head dim 256
#   --ours fp8:  head dim 128 non-causal
# Here, before the call (upstream's wheel: sagebuild build --source-dir <upstream
# checkout> --row upstream-sageattention-2.2.0-torch2.11.0-cu130-cp312-linux_x86_64
# --archs 9.0 ...):  mkdir -p .ab/up && cp <that wheel> .ab/up/, then carry .ab.
# Ours: an installed wheel on PYTHONPATH, else the dev build (scripts/gpu-dev-check.sh build).
# MMA_ENV adds environment to our runs and upstream's alike (e.g.
# SAGEATTN_SMEM_PER_SM_KB=100: the shared memory of an sm_86/89/120 SM).
# Results: $OUT/mma_compare_run*.log
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
wheel=$(ls .ab/up/sageattention-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { echo "no upstream wheel in .ab/up/ (see this script's header)"; exit 2; }
rm -rf /tmp/upsite
python3 -m pip install -q --no-deps --no-index --target /tmp/upsite "$wheel" 2>&1 | grep -v WARNING
ls /tmp/upsite/sageattention/*.so | xargs -n1 basename | paste -sd' '
export PYTHONPATH=${PYTHONPATH:-$PWD/python}
for run in $(seq 1 "${RUNS:-2}"); do
  log="$OUT/mma_compare_run$run.log"
  {
    env SAGEATTN_SM90=0 ${MMA_ENV:-} timeout 280 python3 bench/compare.py --upstream /tmp/upsite --ours fp16 \
      --tables "${FP16_TABLES:-d128,causal,d64,d256}"
    env SAGEATTN_SM90=0 ${MMA_ENV:-} timeout 120 python3 bench/compare.py --upstream /tmp/upsite --ours fp8 \
      --tables "${FP8_TABLES:-d128}"
  } > "$log" 2>&1
  echo "== run $run (rc $?)"
  grep -E "^\*\*|^\| (ours|upstream|cudnn|flash|ours / upstream|ours / cudnn) " "$log"
done
