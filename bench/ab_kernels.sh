#!/usr/bin/env bash
# A/B of the kernels of two source trees with the torch-free kernel benchmark
# (attn_kernel_bench.cu), in one device call:
#   bench/ab_kernels.sh BASE_TREE [NAME=ENV...]
# BASE_TREE holds the base's kernels/ and bench/ (here, before the call:
#   mkdir -p .ab/base && git archive HEAD kernels bench | tar -x -C .ab/base
# and carry .ab); the working tree is the other side.  Each side is built
# for sm_90 / sm_90a on every core, then the two binaries run in alternation,
# twice, for each setting (NAME=ENV: e.g. h100= for none, or
# rtx=SAGEATTN_SMEM_PER_SM_KB=100; default h100=), with SAGEATTN_SM90=0 (the
# mma.sync kernels; sm90=SA_BENCH_SM90=1 times the sm90 kernels too).
# Shapes: AB_SHAPES (default below), each "B H D causal N...".  AB_VARIANTS
# adds sides built from the working tree with extra nvcc flags, e.g.
#   AB_VARIANTS="pp:-DSA90_PINGPONG=1;pp4:-DSA90_PINGPONG=1 -DSA90_EXP_POLY_EVERY=4"
set -uo pipefail
cd "$(dirname "$0")/.."
base=$1; shift
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
flags=(-std=c++17 -O3 --use_fast_math --expt-relaxed-constexpr)
build() {  # tree, out, extra nvcc flags
  local t=$1 o=$2; mkdir -p "$o"
  local pids=() flags=("${flags[@]}") extra=()
  read -ra extra <<< "${3:-}"
  flags+=("${extra[@]}")
  for f in quant attn_pv_fp16 attn_pv_fp8; do
    "$NVCC" "${flags[@]}" -I"$t/kernels/include" -I"$t/kernels/src" -gencode arch=compute_90,code=sm_90 -Xptxas=-v \
      -c "$t/kernels/src/$f.cu" -o "$o/$f.o" 2> "$o/$f.ptxas" & pids+=($!)
  done
  "$NVCC" "${flags[@]}" -I"$t/kernels/include" -I"$t/kernels/src" -gencode arch=compute_90a,code=sm_90a \
    -c "$t/kernels/src/attn_sm90.cu" -o "$o/attn_sm90.o" & pids+=($!)
  "$NVCC" "${flags[@]}" -I"$t/kernels/include" -I"$t/kernels/src" -gencode arch=compute_90,code=sm_90 \
    -c "$t/bench/attn_kernel_bench.cu" -o "$o/bench.o" & pids+=($!)
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  [ $rc = 0 ] && "$NVCC" -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90a,code=sm_90a "$o"/*.o -o "$o/attn_bench"
}
start=$SECONDS
sides=(base new)
build "$base" /tmp/ab/base & pids=($!)
build . /tmp/ab/new & pids+=($!)
IFS=';' read -ra variants <<< "${AB_VARIANTS:-}"
for v in "${variants[@]}"; do
  sides+=("${v%%:*}")
  build . "/tmp/ab/${v%%:*}" "${v#*:}" & pids+=($!)
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
        env SAGEATTN_SM90=0 SA_BENCH_SM90=0 $envs timeout 120 /tmp/ab/$side/attn_bench $sh 2>&1 | grep -v "^#" | tail -n +1
      done
    done
  done
done 2>&1 | tee "$OUT/ab.log"
