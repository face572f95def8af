#!/usr/bin/env bash
# Build the torch-free attention kernel benchmark (attn_kernel_bench.cu) for one
# tuning variant (the SA_* / SA90_* shape parameters of kernels/src/config.cuh):
#   bench/build_attn_kernel_bench.sh NAME [-DSA_...|-DSA90_...]...
# The mma.sync families and quant are compiled for sm_90, the sm90 family for
# sm_90a.  The variant flags apply to the sm90 family only; the other objects
# are built once (without flags) and shared by every variant.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1; shift
out=${SA_VARIANT_DIR:-.devcarry}
mkdir -p "$out/obj_common" "$out/obj_$name"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
base=(-std=c++17 -O3 --use_fast_math --expt-relaxed-constexpr -Ikernels/include -Ikernels/src)
sm90=(-gencode arch=compute_90,code=sm_90)
sm90a=(-gencode arch=compute_90a,code=sm_90a)
pids=()
common="$out/obj_common"
for f in quant attn_pv_fp16 attn_pv_fp8; do
  if [ ! -f "$common/$f.o" ] || [ "kernels/src/$f.cu" -nt "$common/$f.o" ]; then
    "$NVCC" "${base[@]}" "${sm90[@]}" -c kernels/src/$f.cu -o "$common/$f.o" & pids+=($!)
  fi
done
"$NVCC" "${base[@]}" "${sm90a[@]}" -Xptxas=-v "$@" -c kernels/src/attn_sm90.cu -o "$out/obj_$name/attn_sm90.o" \
  2> "$out/obj_$name/ptxas.txt" & pids+=($!)
"$NVCC" "${base[@]}" "${sm90[@]}" -c bench/attn_kernel_bench.cu -o "$out/obj_$name/bench.o" & pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
objs=("$out/obj_$name"/*.o "$common"/quant.o "$common"/attn_pv_fp16.o "$common"/attn_pv_fp8.o)
"$NVCC" "${sm90[@]}" "${sm90a[@]}" "${objs[@]}" -o "$out/attn_bench_$name"
grep -E "registers|spill" "$out/obj_$name/ptxas.txt" | sort | uniq -c | head -4
echo "built $out/attn_bench_$name"
