#!/usr/bin/env bash
# A/B of the kernels of two source trees with the torch-free kernel benchmark
# (attn_kernel_bench.cu), in one device call:
#   bench/ab_kernels.sh BASE_TREE [NAME=ENV...]
# BASE_TREE holds the base's kernels/ and bench/ (here, before the call:
#   mkdir -p .ab/base && git archive HEAD kernels bench | tar -x -C .ab/base
# and carry .ab); the working tree is the other side.  Each side is built
# for sm_90 / sm_90a on every core (bench/build_attn_bench.sh), then the two binaries run in alternation,
# twice, for each setting (NAME=ENV: e.g. h100= for none, or
# rtx=SAGEATTN_SMEM_PER_SM_KB=100; default h100=), with SAGEATTN_SM90=0 (the
# mma.sync kernels; sm90=SA_BENCH_SM90=1 times the sm90 kernels too).
# Shapes: AB_SHAPES (default below), each "B H D causal N...".  AB_VARIANTS
# adds sides built from the working tree with extra nvcc flags, e.g.
#   AB_VARIANTS="s4:-DSA90_STAGES_FP8=4;s6:-DSA90_STAGES_FP8=6"  (the SA_* / SA90_* of kernels/src/config.cuh)
set -uo pipefail
cd "$(dirname "$0")/.."
base=$1; shift
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
start=$SECONDS
sides=(base new)
bench/build_attn_bench.sh "$base" /tmp/ab/base & pids=($!)
bench/build_attn_bench.sh . /tmp/ab/new & pids+=($!)
IFS=';' read -ra variants <<< "${AB_VARIANTS:-}"
for v in "${variants[@]}"; do
  sides+=("${v%%:*}")
  read -ra extra <<< "${v#*:}"
  bench/build_attn_bench.sh . "/tmp/ab/${v%%:*}" "${extra[@]}" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "build failed"; exit 1; }; done
echo "built ${#sides[@]} sides (${sides[*]}) in $((SECONDS - start)) s"
for side in "${sides[@]}"; do
  echo "$side: $(grep -h -A1 'attn_pv_fp16_kernelILi128ELb0E6__half\|attn_pv_fp8_kernelILi128ELb0E6__half' /tmp/ab/$side/attn_pv_fp*.ptxas |
    grep -o 'Used [0-9]* registers\|[0-9]* bytes spill stores' | paste -sd' ')"
done
SHAPES=${AB_SHAPES:-"4 32 128 0 2048 8192 32768;4 32 128 1 8192;4 32 64 0 8192"}
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=("h100=")
for setting in "${settings[@]}"; do
  name=${setting%%=*}; envs=${setting#*=}
  IFS=';' read -ra shapes <<< "$SHAPES"
  for round in 1 2; do
    for side in "${sides[@]}"; do
      for sh in "${shapes[@]}"; do
        echo "== $name round $round $side: $sh"
        env SAGEATTN_SM90=0 SA_BENCH_SM90=0 $envs timeout 120 /tmp/ab/$side/attn_bench $sh 2>&1 | grep -v "^#"
      done
    done
  done
done 2>&1 | tee "$OUT/ab.log"
